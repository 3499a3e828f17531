import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OutputAction } from '../../src/shared/responses.js';
import {
  type ConversationItem,
  type ImageData,
  type ModelRequest,
  type ProviderContext,
} from '../../src/main/core/models/model-provider.js';
import {
  computerToolFor,
  createAnthropicProvider,
} from '../../src/main/core/models/providers/anthropic-provider.js';
import { anthropicError, anthropicFixture, startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { modelRequest } from '../helpers/model-request.js';
import { modelFailure, providerHarness, NOBODY_LISTENS } from '../helpers/provider-harness.js';

const KEY = 'sk-ant-api03-test-secret-key';
const HINT = 'set ANTHROPIC_API_KEY in the environment Benchtop runs in';

const { fake, context } = providerHarness({
  start: startFakeAnthropic,
  context: (url) => ({
    name: 'claude-sonnet-4-5',
    config: { provider: 'anthropic', base_url: url },
    apiKey: KEY,
    keyHint: HINT,
    timeoutMs: 5_000,
    retries: 2,
  }),
});

let png: ImageData;
beforeAll(async () => {
  png = await image(1280, 720);
});

async function image(width: number, height: number): Promise<ImageData> {
  const bytes = await sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  return { mediaType: 'image/png', base64: bytes.toString('base64') };
}

function provider(overrides: Partial<ProviderContext> = {}, config: Record<string, unknown> = {}) {
  const base = context(overrides);
  return createAnthropicProvider({ ...base, config: { ...base.config, ...config } });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return modelRequest({ model: 'claude-sonnet-4-5', ...overrides });
}

/** The recorded computer-use answer with its content replaced by these tool_use inputs. */
function toolUses(...inputs: unknown[]) {
  const message = anthropicFixture('message-computer-use');
  message.content = inputs.map((input, index) => ({
    type: 'tool_use',
    id: `toolu_0${index}`,
    name: 'computer',
    input,
  }));
  return { json: message };
}

type SentBody = {
  model: string;
  max_tokens: number;
  system?: string;
  messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
  tools?: Array<Record<string, unknown>>;
  temperature?: number;
  top_p?: number;
  stream?: boolean;
};
const sent = (index = 0) => fake.requests[index]!.body as SentBody;
const imageBlock = (data: ImageData) => ({
  type: 'image',
  source: { type: 'base64', media_type: data.mediaType, data: data.base64 },
});

const failure = (promise: Promise<unknown>) => modelFailure(promise, KEY);

describe('anthropic provider: the request', () => {
  it('sends the whole conversation, the computer tool with the display and the key', async () => {
    fake.reply({ json: anthropicFixture('message-end-turn') });
    const screenshot = await image(1280, 720);
    await provider().respond(
      request({
        instructions: 'You operate a browser.',
        temperature: 0.3,
        top_p: 0.9,
        max_output_tokens: 900,
        conversation: [
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'text', text: 'Fill in the form' },
              { type: 'image', image: png },
            ],
          },
          {
            type: 'computer_call',
            call_id: 'call_1',
            action: { type: 'click', button: 'left', x: 100, y: 200 },
          },
          { type: 'computer_call_output', call_id: 'call_1', image: screenshot },
          { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Be quick.' }] },
        ],
      }),
    );
    const [req] = fake.requests;
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/v1/messages');
    expect(req!.headers['x-api-key']).toBe(KEY);
    expect(req!.headers['anthropic-version']).toBe('2023-06-01');
    expect(req!.headers['anthropic-beta']).toBe('computer-use-2025-01-24');
    expect(sent()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 900,
      system: 'You operate a browser.\n\nBe quick.',
      temperature: 0.3,
      top_p: 0.9,
      tools: [
        {
          type: 'computer_20250124',
          name: 'computer',
          display_width_px: 1280,
          display_height_px: 720,
        },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Fill in the form' }, imageBlock(png)] },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: 'call_1',
              name: 'computer',
              input: { action: 'left_click', coordinate: [100, 200] },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [imageBlock(screenshot)] },
          ],
        },
      ],
    });
  });

  it('uses the configured upstream model, 4096 tokens by default and the newer tool for it', async () => {
    fake.reply({ json: anthropicFixture('message-end-turn') });
    await provider({}, { model: 'claude-opus-4-5-20251101', base_url: `${fake.url}/v1/` }).respond(
      request(),
    );
    expect(fake.requests[0]!.path).toBe('/v1/messages');
    expect(fake.requests[0]!.headers['anthropic-beta']).toBe('computer-use-2025-11-24');
    expect(sent()).toMatchObject({ model: 'claude-opus-4-5-20251101', max_tokens: 4096 });
    expect(sent().tools![0]!.type).toBe('computer_20251124');
    expect(sent()).not.toHaveProperty('temperature');
    expect(sent()).not.toHaveProperty('system');
  });

  it.each([
    ['claude-sonnet-4-5', 'computer_20250124'],
    ['claude-sonnet-4-5-20250929', 'computer_20250124'],
    ['claude-haiku-4-5', 'computer_20250124'],
    ['claude-opus-4-1-20250805', 'computer_20250124'],
    ['claude-sonnet-4-20250514', 'computer_20250124'],
    ['claude-3-7-sonnet-latest', 'computer_20250124'],
    ['claude-opus-4-5-20251101', 'computer_20251124'],
    ['claude-opus-4-6', 'computer_20251124'],
    ['claude-sonnet-4-6', 'computer_20251124'],
    ['claude-opus-4-7', 'computer_20251124'],
    ['my-gateway-model', 'computer_20251124'],
  ])('%s takes %s', (model, type) => {
    expect(computerToolFor(model).type).toBe(type);
  });

  it('declares function tools, and sends earlier function calls and their results', async () => {
    fake.reply({ json: anthropicFixture('message-function-call') });
    const parameters = { type: 'object', properties: { order_id: { type: 'string' } } };
    const reply = await provider().respond(
      request({
        computer: null,
        functions: [{ name: 'lookup_order', description: 'Finds an order', parameters }],
        conversation: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'Where is A-1041?' }] },
          {
            type: 'function_call',
            call_id: 'call_7',
            name: 'lookup_order',
            arguments: '{"order_id":"A-1041"}',
          },
          { type: 'function_call_output', call_id: 'call_7', output: 'shipped' },
        ],
      }),
    );
    expect(fake.requests[0]!.headers['anthropic-beta']).toBeUndefined();
    expect(sent().tools).toEqual([
      { name: 'lookup_order', description: 'Finds an order', input_schema: parameters },
    ]);
    expect(sent().messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_7', name: 'lookup_order', input: { order_id: 'A-1041' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_7',
            content: [{ type: 'text', text: 'shipped' }],
          },
        ],
      },
    ]);
    expect(reply.output).toEqual([
      { type: 'message', text: 'Let me look up the order first.' },
      {
        type: 'function_call',
        name: 'lookup_order',
        arguments: '{"order_id":"A-1042","include_items":true}',
      },
    ]);
  });

  it('keeps the API rules: alternation, results right after their calls, no lone images', async () => {
    fake.reply({ json: anthropicFixture('message-end-turn') });
    const conversation: ConversationItem[] = [
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Open example.com' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'Then log in' },
        ],
      },
      { type: 'reasoning', text: 'thinking out loud' },
      {
        type: 'computer_call',
        call_id: 'call_1',
        action: { type: 'navigate', url: 'https://example.com' },
      },
      { type: 'computer_call_output', call_id: 'call_1', image: null },
      {
        type: 'computer_call',
        call_id: 'call_2',
        action: { type: 'keypress', keys: ['control', 'l'] },
      },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hurry' }] },
      { type: 'computer_call_output', call_id: 'call_2', image: png },
      {
        type: 'computer_call',
        call_id: 'call_3',
        action: { type: 'scroll', x: 10, y: 20, scroll_x: 0, scroll_y: -250 },
      },
    ];
    await provider().respond(request({ conversation }));
    expect(sent().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Open example.com' },
          { type: 'text', text: 'Then log in' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'text',
            text: '(Computer action performed: {"type":"navigate","url":"https://example.com"})',
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Screenshot after the computer action:' },
          { type: 'text', text: 'An earlier screenshot, left out to save space.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'call_2',
            name: 'computer',
            input: { action: 'key', text: 'ctrl+l' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_2', content: [imageBlock(png)] },
          { type: 'text', text: 'Hurry' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'call_3',
            name: 'computer',
            input: {
              action: 'scroll',
              coordinate: [10, 20],
              scroll_direction: 'up',
              scroll_amount: 3,
            },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_3',
            content: 'No result was reported for this call.',
          },
        ],
      },
    ]);
  });
});

describe('anthropic provider: the answer', () => {
  it('turns text and a tool_use into a message and a click, with usage', async () => {
    fake.reply({ json: anthropicFixture('message-computer-use') });
    const reply = await provider().respond(request());
    expect(reply).toEqual({
      output: [
        { type: 'message', text: "I'll click the search box to start typing." },
        { type: 'computer_call', action: { type: 'click', button: 'left', x: 512, y: 300 } },
      ],
      usage: { input_tokens: 1893 + 1200, output_tokens: 87, cached_tokens: 1200 },
    });
  });

  it('turns thinking into reasoning and drops redacted thinking', async () => {
    fake.reply({ json: anthropicFixture('message-thinking') });
    const reply = await provider().respond(request());
    expect(reply.output).toEqual([
      {
        type: 'reasoning',
        text: 'The form is visible. I should fill in the name field first, then submit.',
      },
      { type: 'computer_call', action: { type: 'type', text: 'Ada Lovelace' } },
    ]);
  });

  it.each<[string, Record<string, unknown>, OutputAction[]]>([
    [
      'left_click',
      { action: 'left_click', coordinate: [10, 20] },
      [{ type: 'click', button: 'left', x: 10, y: 20 }],
    ],
    [
      'left_click holding shift',
      { action: 'left_click', coordinate: [10, 20], text: 'shift' },
      [{ type: 'click', button: 'left', x: 10, y: 20, keys: ['shift'] }],
    ],
    [
      'right_click',
      { action: 'right_click', coordinate: [5, 6] },
      [{ type: 'click', button: 'right', x: 5, y: 6 }],
    ],
    [
      'middle_click',
      { action: 'middle_click', coordinate: [5, 6] },
      [{ type: 'click', button: 'middle', x: 5, y: 6 }],
    ],
    [
      'double_click',
      { action: 'double_click', coordinate: [7, 8] },
      [{ type: 'double_click', button: 'left', x: 7, y: 8 }],
    ],
    [
      'triple_click',
      { action: 'triple_click', coordinate: [7, 8] },
      [{ type: 'triple_click', button: 'left', x: 7, y: 8 }],
    ],
    [
      'left_click_drag',
      { action: 'left_click_drag', start_coordinate: [1, 2], coordinate: [300, 400] },
      [{ type: 'drag', x: 1, y: 2, end_x: 300, end_y: 400 }],
    ],
    [
      'mouse_move',
      { action: 'mouse_move', coordinate: [640, 360] },
      [{ type: 'move', x: 640, y: 360 }],
    ],
    [
      'left_mouse_down',
      { action: 'left_mouse_down', coordinate: [3, 4] },
      [{ type: 'mouse_down', button: 'left', x: 3, y: 4 }],
    ],
    [
      'left_mouse_up',
      { action: 'left_mouse_up', coordinate: [3, 4] },
      [{ type: 'mouse_up', button: 'left', x: 3, y: 4 }],
    ],
    [
      'rounded coordinates',
      { action: 'mouse_move', coordinate: [10.6, 2000] },
      [{ type: 'move', x: 11, y: 719 }],
    ],
    ['type', { action: 'type', text: 'hello world' }, [{ type: 'type', text: 'hello world' }]],
    [
      'key ctrl+shift+t',
      { action: 'key', text: 'ctrl+shift+t' },
      [{ type: 'keypress', keys: ['control', 'shift', 't'] }],
    ],
    ['key Return', { action: 'key', text: 'Return' }, [{ type: 'keypress', keys: ['enter'] }]],
    [
      'key Page_Down',
      { action: 'key', text: 'Page_Down' },
      [{ type: 'keypress', keys: ['pagedown'] }],
    ],
    [
      'key BackSpace',
      { action: 'key', text: 'BackSpace' },
      [{ type: 'keypress', keys: ['backspace'] }],
    ],
    [
      'key super+Left',
      { action: 'key', text: 'super+Left' },
      [{ type: 'keypress', keys: ['meta', 'arrowleft'] }],
    ],
    [
      'key ctrl+minus',
      { action: 'key', text: 'ctrl+minus' },
      [{ type: 'keypress', keys: ['control', '-'] }],
    ],
    ['key KP_0 and Prior', { action: 'key', text: 'KP_0' }, [{ type: 'keypress', keys: ['0'] }]],
    [
      'key with two presses',
      { action: 'key', text: 'ctrl+a Delete' },
      [
        { type: 'keypress', keys: ['control', 'a'] },
        { type: 'keypress', keys: ['delete'] },
      ],
    ],
    [
      'hold_key',
      { action: 'hold_key', text: 'shift', duration: 2 },
      [{ type: 'keypress', keys: ['shift'] }],
    ],
    [
      'scroll down',
      { action: 'scroll', coordinate: [640, 360], scroll_direction: 'down', scroll_amount: 3 },
      [{ type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 300 }],
    ],
    [
      'scroll up',
      { action: 'scroll', coordinate: [640, 360], scroll_direction: 'up', scroll_amount: 2 },
      [{ type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: -200 }],
    ],
    [
      'scroll left holding ctrl',
      {
        action: 'scroll',
        coordinate: [1, 1],
        scroll_direction: 'left',
        scroll_amount: 1,
        text: 'ctrl',
      },
      [{ type: 'scroll', x: 1, y: 1, scroll_x: -100, scroll_y: 0, keys: ['control'] }],
    ],
    [
      'scroll right',
      { action: 'scroll', coordinate: [1, 1], scroll_direction: 'right', scroll_amount: 5 },
      [{ type: 'scroll', x: 1, y: 1, scroll_x: 500, scroll_y: 0 }],
    ],
    ['wait', { action: 'wait', duration: 1.5 }, [{ type: 'wait', ms: 1500 }]],
    ['screenshot', { action: 'screenshot' }, [{ type: 'wait', ms: 0 }]],
    ['cursor_position', { action: 'cursor_position' }, [{ type: 'wait', ms: 0 }]],
  ])('%s', async (_name, input, actions) => {
    fake.reply(toolUses(input));
    const reply = await provider().respond(request());
    expect(reply.output).toEqual(actions.map((action) => ({ type: 'computer_call', action })));
  });

  it('acts where the pointer is when Claude gives no coordinate', async () => {
    fake.reply(
      toolUses(
        { action: 'left_mouse_down' },
        { action: 'left_click_drag', coordinate: [70, 80] },
        { action: 'left_mouse_up' },
        { action: 'scroll', scroll_direction: 'down', scroll_amount: 1 },
      ),
    );
    const conversation: ConversationItem[] = [
      { type: 'computer_call', call_id: 'call_1', action: { type: 'move', x: 50, y: 60 } },
      { type: 'computer_call_output', call_id: 'call_1', image: png },
    ];
    const reply = await provider().respond(request({ conversation }));
    expect(
      reply.output.map((item) => (item.type === 'computer_call' ? item.action : item)),
    ).toEqual([
      { type: 'mouse_down', button: 'left', x: 50, y: 60 },
      { type: 'drag', x: 50, y: 60, end_x: 70, end_y: 80 },
      { type: 'mouse_up', button: 'left', x: 70, y: 80 },
      { type: 'scroll', x: 70, y: 80, scroll_x: 0, scroll_y: 100 },
    ]);
  });

  it.each([
    [
      'an unknown action',
      { action: 'zoom', region: [0, 0, 10, 10] },
      /does not know the action "zoom".*"region"/,
    ],
    [
      'a bad coordinate',
      { action: 'left_click', coordinate: 'middle' },
      /coordinate is not an \[x, y\] pair.*"middle"/,
    ],
    ['an unknown key', { action: 'key', text: 'hyper+q' }, /"hyper\+q" is not a key/],
    [
      'a bad direction',
      { action: 'scroll', coordinate: [1, 1], scroll_direction: 'sideways', scroll_amount: 1 },
      /scroll_direction/,
    ],
    ['no pointer yet', { action: 'left_click' }, /pointer position is not known/],
    ['no action', { coordinate: [1, 1] }, /names no action/],
    ['a wait without duration', { action: 'wait' }, /duration/],
  ])('fails with bad_answer on %s', async (_name, input, message) => {
    fake.reply(toolUses({ action: 'screenshot' }, input));
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toMatch(/^Anthropic answered a computer action Benchtop cannot perform/);
    expect(error.message).toMatch(message);
  });

  it('treats a tool_use of another name as a function call, not a computer action', async () => {
    const message = anthropicFixture('message-function-call');
    fake.reply({ json: message });
    const reply = await provider().respond(request({ functions: [{ name: 'lookup_order' }] }));
    expect(reply.output[1]).toEqual({
      type: 'function_call',
      name: 'lookup_order',
      arguments: '{"order_id":"A-1042","include_items":true}',
    });
  });
});

describe('anthropic provider: displays beyond the API image limit', () => {
  it('declares and sends a scaled screen and maps coordinates back to the display', async () => {
    const big = await image(1920, 1080);
    fake.reply(toolUses({ action: 'left_click', coordinate: [714, 402] }));
    const reply = await provider().respond(
      request({
        computer: { width: 1920, height: 1080, environment: 'desktop' },
        conversation: [
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'text', text: 'Go' },
              { type: 'image', image: png },
            ],
          },
          {
            type: 'computer_call',
            call_id: 'call_1',
            action: { type: 'click', button: 'left', x: 960, y: 540 },
          },
          { type: 'computer_call_output', call_id: 'call_1', image: big },
        ],
      }),
    );
    expect(sent().tools![0]).toMatchObject({ display_width_px: 1429, display_height_px: 804 });
    const [first, call, result] = sent().messages;
    // A picture that is not of the display goes as it is.
    expect(first!.content[1]).toEqual(imageBlock(png));
    expect(call!.content[0]!.input).toEqual({ action: 'left_click', coordinate: [715, 402] });
    const block = (result!.content[0]!.content as Array<{ source: { data: string } }>)[0]!;
    const meta = await sharp(Buffer.from(block.source.data, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([1429, 804]);
    expect(reply.output).toEqual([
      { type: 'computer_call', action: { type: 'click', button: 'left', x: 959, y: 540 } },
    ]);
  });
});

describe('anthropic provider: failures', () => {
  it('fails without any request when the key is missing', async () => {
    const error = await failure(provider({ apiKey: undefined }).respond(request()));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain(HINT);
    expect(fake.requests).toHaveLength(0);
  });

  it('says what to set when the key is refused, without the key', async () => {
    fake.reply({ status: 401, json: anthropicFixture('error-authentication') });
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('ANTHROPIC_API_KEY');
  });

  it('passes on what Anthropic says when it rejects a request', async () => {
    fake.reply({ status: 400, json: anthropicFixture('error-invalid-request') });
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toMatch(/HTTP 400.*tool_result/);
  });

  it('tries an overloaded API again, and reports it when it stays so', async () => {
    const overloaded = {
      ...anthropicError(529, 'overloaded_error', 'Overloaded'),
      headers: { 'retry-after': '0' },
    };
    fake.reply(overloaded, { json: anthropicFixture('message-end-turn') });
    const reply = await provider().respond(request());
    expect(reply.output.some((item) => item.type === 'message')).toBe(true);
    expect(fake.requests).toHaveLength(2);

    fake.reply(overloaded, overloaded, overloaded);
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toBe('Anthropic answered HTTP 529: Overloaded (tried 3 times)');
    expect(fake.requests).toHaveLength(5);
  });

  it('turns a refusal into a rejected call', async () => {
    fake.reply({ json: anthropicFixture('message-refusal') });
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toMatch(/refusal.*can't help/);
  });

  it('reports an answer that is not JSON', async () => {
    fake.reply({ text: '<html>502 Bad Gateway</html>' });
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toContain('502 Bad Gateway');
  });

  it('reports JSON that is not a message', async () => {
    fake.reply({ json: { hello: 'world' } });
    const error = await failure(provider().respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toContain('without a content list');
  });

  it('times out on a slow server', async () => {
    fake.reply({ json: anthropicFixture('message-end-turn'), delayMs: 1_000 });
    const error = await failure(provider({ timeoutMs: 100 }).respond(request()));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('timeout_ms');
  });

  it('reports a server that is not running', async () => {
    const error = await failure(provider({}, { base_url: NOBODY_LISTENS }).respond(request()));
    expect(error.kind).toBe('unreachable');
    expect(error.message).toContain(NOBODY_LISTENS);
  });
});

describe('anthropic provider: chat completions', () => {
  const dataUrl = () => `data:${png.mediaType};base64,${png.base64}`;

  it('translates a chat request and its answer', async () => {
    fake.reply({ json: anthropicFixture('chat-message') });
    const reply = await provider().chat({
      signal: new AbortController().signal,
      body: {
        model: 'claude-haiku-4-5',
        max_tokens: 100,
        temperature: 0.2,
        messages: [
          { role: 'system', content: 'Describe screenshots.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: dataUrl() } },
            ],
          },
        ],
      },
    });
    expect(fake.requests[0]!.headers['anthropic-beta']).toBeUndefined();
    expect(sent()).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      temperature: 0.2,
      system: 'Describe screenshots.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, imageBlock(png)] },
      ],
    });
    expect(reply.kind).toBe('json');
    expect(reply.kind === 'json' && reply.completion).toMatchObject({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      object: 'chat.completion',
      model: 'claude-haiku-4-5-20251001',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'The screenshot shows a login form with two fields.',
          },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 1570, completion_tokens: 14, total_tokens: 1584 },
    });
  });

  it('streams Anthropic events as chat.completion.chunk objects', async () => {
    fake.reply({ events: anthropicFixture('chat-stream') });
    const reply = await provider().chat({
      signal: new AbortController().signal,
      body: {
        model: 'claude-haiku-4-5',
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      },
    });
    expect(sent()).toMatchObject({
      stream: true,
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    if (reply.kind !== 'stream') throw new Error('expected a stream');
    const chunks: Array<Record<string, any>> = [];
    for await (const chunk of reply.chunks) chunks.push(chunk);
    expect(
      chunks.every(
        (c) => c.object === 'chat.completion.chunk' && c.id === 'msg_01ZqJmPz3L7c2aHnBoFdRTcV',
      ),
    ).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hello' },
      { content: ', world' },
      {},
    ]);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 25,
      completion_tokens: 6,
      total_tokens: 31,
    });
  });

  it('fails the chat call itself when a stream is refused', async () => {
    fake.reply({ status: 401, json: anthropicFixture('error-authentication') });
    const error = await failure(
      provider().chat({
        signal: new AbortController().signal,
        body: { stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      }),
    );
    expect(error.kind).toBe('auth');
  });

  it('fails the stream on an error event', async () => {
    const [start] = anthropicFixture<Array<{ event: string; data: unknown }>>('chat-stream');
    fake.reply({
      events: [
        start!,
        {
          event: 'error',
          data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        },
      ],
    });
    const reply = await provider().chat({
      signal: new AbortController().signal,
      body: { stream: true, messages: [{ role: 'user', content: 'Hi' }] },
    });
    if (reply.kind !== 'stream') throw new Error('expected a stream');
    const read = async () => {
      for await (const _chunk of reply.chunks) void _chunk;
    };
    const error = await failure(read());
    expect(error.message).toContain('Overloaded');
  });
});
