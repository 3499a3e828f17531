import { describe, expect, it } from 'vitest';
import { parseChord } from '../../src/main/core/keyboard/key-names.js';
import type { ConversationItem, ModelRequest } from '../../src/main/core/models/model-provider.js';
import { createOpenAIProvider } from '../../src/main/core/models/providers/openai-provider.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { modelRequest } from '../helpers/model-request.js';
import {
  modelFailure,
  providerFixture,
  providerHarness,
  NOBODY_LISTENS,
} from '../helpers/provider-harness.js';

const KEY = 'sk-test-benchtop-0123456789-secret';
const PNG_1 = { mediaType: 'image/png', base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA' };
const PNG_2 = { mediaType: 'image/png', base64: 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAAB' };
const url = (image: { mediaType: string; base64: string }) =>
  `data:${image.mediaType};base64,${image.base64}`;

const fixture = (name: string) => providerFixture<Record<string, unknown>>('openai', name);

/** A response with one preview computer_call carrying `action`. */
function oneAction(action: Record<string, unknown>): Record<string, unknown> {
  const response = fixture('preview-click');
  const call = (response.output as Record<string, unknown>[])[1];
  return { ...response, output: [{ ...call, action }] };
}

const { fake, context } = providerHarness({
  start: startFakeOpenAI,
  context: (url) => ({
    name: 'computer-use-preview',
    config: { provider: 'openai', base_url: url, api_key_env: 'OPENAI_API_KEY' },
    apiKey: KEY,
    keyHint: 'set OPENAI_API_KEY',
    timeoutMs: 5000,
    retries: 2,
  }),
});

const firstMessage: ConversationItem = {
  type: 'message',
  role: 'user',
  content: [
    { type: 'text', text: 'Search for "cats"' },
    { type: 'image', image: PNG_1 },
  ],
};

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return modelRequest({
    model: 'computer-use-preview',
    instructions: 'You operate a browser for the user.',
    conversation: [firstMessage],
    computer: { width: 1024, height: 768, environment: 'browser' },
    ...overrides,
  });
}

function sent(index = 0): Record<string, unknown> {
  return fake.requests[index]!.body as Record<string, unknown>;
}

describe('openai provider: what it sends', () => {
  it('asks the Responses API with the preview computer tool, the instructions and the screenshot', async () => {
    fake.reply({ json: fixture('preview-click') });
    const reply = await createOpenAIProvider(context()).respond(request());

    const [received] = fake.requests;
    expect(received).toMatchObject({ method: 'POST', path: '/v1/responses' });
    expect(received!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent()).toEqual({
      model: 'computer-use-preview',
      instructions: 'You operate a browser for the user.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Search for "cats"' },
            { type: 'input_image', image_url: url(PNG_1) },
          ],
        },
      ],
      tools: [
        {
          type: 'computer_use_preview',
          display_width: 1024,
          display_height: 768,
          environment: 'browser',
        },
      ],
      truncation: 'auto',
      reasoning: { summary: 'concise' },
    });
    expect(reply).toEqual({
      output: [
        {
          type: 'reasoning',
          text: 'The search box is at the top of the page; clicking it first.',
        },
        {
          type: 'computer_call',
          call_id: 'call_zw3PbK1yDqJtL9mA2cXvR8sN',
          action: { type: 'click', x: 412, y: 88, button: 'left' },
        },
      ],
      usage: { input_tokens: 1519, output_tokens: 37, cached_tokens: 0 },
      state: { response_id: 'resp_67cc4b1a8f2c81908ad1f32c7d6e1a0a0c2a8e5f3b9d4c11' },
    });
  });

  it('uses the configured upstream model, sampling settings and function tools; unknown environments become linux', async () => {
    fake.reply({ json: fixture('preview-click') });
    const provider = createOpenAIProvider(
      context({
        name: 'my-cua',
        config: { provider: 'openai', base_url: `${fake.url}/`, model: 'computer-use-preview' },
      }),
    );
    await provider.respond(
      request({
        instructions: null,
        computer: { width: 1280, height: 800, environment: 'desktop' },
        functions: [
          {
            name: 'record_total',
            description: 'Record the order total',
            parameters: { type: 'object', properties: { total: { type: 'number' } } },
          },
          { name: 'finish' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        max_output_tokens: 512,
      }),
    );
    expect(fake.requests[0]!.path).toBe('/v1/responses');
    const body = sent();
    expect(body).toMatchObject({
      model: 'computer-use-preview',
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 512,
    });
    expect(body).not.toHaveProperty('instructions');
    expect(body.tools).toEqual([
      {
        type: 'computer_use_preview',
        display_width: 1280,
        display_height: 800,
        environment: 'linux',
      },
      {
        type: 'function',
        name: 'record_total',
        description: 'Record the order total',
        parameters: { type: 'object', properties: { total: { type: 'number' } } },
        strict: false,
      },
      {
        type: 'function',
        name: 'finish',
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
    ]);
  });

  it('without computer use sends no computer tool, truncation or reasoning settings', async () => {
    fake.reply({ json: fixture('message-and-function-call') });
    await createOpenAIProvider(context({ name: 'gpt-5.4' })).respond(request({ computer: null }));
    expect(sent()).not.toHaveProperty('tools');
    expect(sent()).not.toHaveProperty('truncation');
    expect(sent()).not.toHaveProperty('reasoning');
  });

  it('continues upstream with previous_response_id and only the new screenshot', async () => {
    fake.reply({ json: fixture('preview-click') });
    const conversation: ConversationItem[] = [
      firstMessage,
      {
        type: 'computer_call',
        call_id: 'call_A',
        action: { type: 'click', x: 1, y: 2, button: 'left' },
      },
      { type: 'computer_call_output', call_id: 'call_A', image: PNG_2 },
    ];
    await createOpenAIProvider(context()).respond(
      request({
        conversation,
        continuation: { state: { response_id: 'resp_prev' }, input: conversation.slice(2) },
        turn: 1,
      }),
    );
    const body = sent();
    expect(body.previous_response_id).toBe('resp_prev');
    expect(body.input).toEqual([
      {
        type: 'computer_call_output',
        call_id: 'call_A',
        output: { type: 'computer_screenshot', image_url: url(PNG_2) },
      },
    ]);
    // OpenAI does not carry instructions or tools over from the previous response.
    expect(body.instructions).toBe('You operate a browser for the user.');
    expect((body.tools as unknown[]).length).toBe(1);
  });

  it('sends the whole conversation when there is nothing to continue: earlier calls, their screenshots, messages', async () => {
    fake.reply({ json: fixture('preview-click') });
    const conversation: ConversationItem[] = [
      firstMessage,
      { type: 'reasoning', text: 'Clicking the search box.' },
      {
        type: 'computer_call',
        call_id: 'call_A',
        action: { type: 'click', x: 10, y: 20, button: 'middle' },
      },
      { type: 'computer_call_output', call_id: 'call_A', image: null },
      { type: 'computer_call', call_id: 'call_B', action: { type: 'keypress', keys: ['ctrl+l'] } },
      { type: 'computer_call_output', call_id: 'call_B', image: PNG_2 },
      {
        type: 'computer_call',
        call_id: 'call_C',
        action: { type: 'navigate', url: 'https://example.com' },
      },
      { type: 'computer_call_output', call_id: 'call_C', image: PNG_1 },
      { type: 'function_call', call_id: 'call_F', name: 'lookup', arguments: '{"q":1}' },
      { type: 'function_call_output', call_id: 'call_F', output: '{"found":true}' },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Searching now.' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'image', image: null },
          { type: 'text', text: 'Go on' },
        ],
      },
    ];
    await createOpenAIProvider(context()).respond(request({ conversation }));
    const body = sent();
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body.input).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Search for "cats"' },
          { type: 'input_image', image_url: url(PNG_1) },
        ],
      },
      // The click's screenshot was left out: OpenAI needs one to take the call back, so it is told.
      { role: 'assistant', content: expect.stringContaining('"type":"click"') as unknown },
      { role: 'user', content: expect.stringContaining('left out') as unknown },
      {
        type: 'computer_call',
        id: 'cu_call_B',
        call_id: 'call_B',
        status: 'completed',
        pending_safety_checks: [],
        action: { type: 'keypress', keys: ['CTRL', 'L'] },
      },
      {
        type: 'computer_call_output',
        call_id: 'call_B',
        output: { type: 'computer_screenshot', image_url: url(PNG_2) },
      },
      // OpenAI's tool cannot navigate: told in text, its screenshot shown as an image.
      { role: 'assistant', content: expect.stringContaining('https://example.com') as unknown },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'The screen after that action:' },
          { type: 'input_image', image_url: url(PNG_1) },
        ],
      },
      { type: 'function_call', call_id: 'call_F', name: 'lookup', arguments: '{"q":1}' },
      { type: 'function_call_output', call_id: 'call_F', output: '{"found":true}' },
      { role: 'assistant', content: 'Searching now.' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: expect.stringContaining('left out') as unknown },
          { type: 'input_text', text: 'Go on' },
        ],
      },
    ]);
  });

  it('falls back to the whole conversation when the new input cannot continue upstream', async () => {
    fake.reply({ json: fixture('preview-click') });
    const conversation: ConversationItem[] = [
      firstMessage,
      { type: 'computer_call', call_id: 'call_A', action: { type: 'wait', ms: 0 } },
      { type: 'computer_call_output', call_id: 'call_A', image: null },
    ];
    await createOpenAIProvider(context()).respond(
      request({
        conversation,
        continuation: { state: { response_id: 'resp_prev' }, input: conversation.slice(2) },
      }),
    );
    expect(sent()).not.toHaveProperty('previous_response_id');
    expect((sent().input as unknown[]).length).toBe(3);
  });
});

describe('openai provider: the actions it translates', () => {
  const display = { width: 1024, height: 768, environment: 'browser' };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      'left click',
      { type: 'click', button: 'left', x: 10, y: 20 },
      { type: 'click', x: 10, y: 20, button: 'left' },
    ],
    [
      'right click',
      { type: 'click', button: 'right', x: 10, y: 20 },
      { type: 'click', x: 10, y: 20, button: 'right' },
    ],
    [
      'wheel click',
      { type: 'click', button: 'wheel', x: 10, y: 20 },
      { type: 'click', x: 10, y: 20, button: 'middle' },
    ],
    [
      'back click',
      { type: 'click', button: 'back', x: 10, y: 20 },
      { type: 'click', x: 10, y: 20, button: 'back' },
    ],
    [
      'forward click',
      { type: 'click', button: 'forward', x: 10, y: 20 },
      { type: 'click', x: 10, y: 20, button: 'forward' },
    ],
    [
      'double click',
      { type: 'double_click', x: 300, y: 400 },
      { type: 'double_click', x: 300, y: 400, button: 'left' },
    ],
    [
      'drag along a path',
      {
        type: 'drag',
        path: [
          { x: 10, y: 20 },
          { x: 50, y: 60 },
          { x: 90, y: 100 },
        ],
      },
      { type: 'drag', x: 10, y: 20, end_x: 90, end_y: 100 },
    ],
    ['move', { type: 'move', x: 5, y: 6 }, { type: 'move', x: 5, y: 6 }],
    ['screenshot', { type: 'screenshot' }, { type: 'wait', ms: 0 }],
    [
      'scroll',
      { type: 'scroll', x: 500, y: 400, scroll_x: -40, scroll_y: 300 },
      { type: 'scroll', x: 500, y: 400, scroll_x: -40, scroll_y: 300 },
    ],
    ['type', { type: 'type', text: 'hello\nworld' }, { type: 'type', text: 'hello\nworld' }],
    ['wait', { type: 'wait' }, { type: 'wait', ms: 1000 }],
    ['wait with a duration', { type: 'wait', ms: 250 }, { type: 'wait', ms: 250 }],
    [
      'a point past the display edge',
      { type: 'click', button: 'left', x: 5000, y: -3 },
      { type: 'click', x: 1023, y: 0, button: 'left' },
    ],
  ];
  it.each(cases)('%s', async (_name, action, expected) => {
    fake.reply({ json: oneAction(action) });
    const reply = await createOpenAIProvider(context()).respond(request({ computer: display }));
    expect(reply.output).toEqual([
      { type: 'computer_call', call_id: 'call_zw3PbK1yDqJtL9mA2cXvR8sN', action: expected },
    ]);
  });

  const keyCases: Array<[string[], string[]]> = [
    [
      ['CTRL', 'A'],
      ['control', 'a'],
    ],
    [['ctrl+shift+t'], ['control', 'shift', 't']],
    [['Return'], ['enter']],
    [['ENTER'], ['enter']],
    [['Page_Down'], ['pagedown']],
    [['BackSpace'], ['backspace']],
    [['ARROWLEFT'], ['arrowleft']],
    [['ESC'], ['escape']],
    [['SPACE'], ['space']],
    [
      ['CMD', 'C'],
      ['meta', 'c'],
    ],
    [
      ['Control_L', 'minus'],
      ['control', '-'],
    ],
    [
      ['ALT', 'F4'],
      ['alt', 'f4'],
    ],
    [['/'], ['/']],
  ];
  it.each(keyCases)('keypress %j', async (keys, expected) => {
    fake.reply({ json: oneAction({ type: 'keypress', keys }) });
    const reply = await createOpenAIProvider(context()).respond(request());
    const call = reply.output[0] as { action: { type: string; keys: string[] } };
    expect(call.action).toEqual({ type: 'keypress', keys: expected });
    // Every name must be one Benchtop's computers accept.
    expect(parseChord(call.action.keys, 'keys')).toEqual(expected);
  });

  const malformed: Array<[string, Record<string, unknown>, string]> = [
    ['an action OpenAI may add later', { type: 'zoom', x: 1, y: 2 }, 'zoom'],
    ['a click without coordinates', { type: 'click', button: 'left' }, 'numeric x'],
    ['a click with an odd button', { type: 'click', button: 'thumb', x: 1, y: 2 }, 'thumb'],
    ['a drag with one point', { type: 'drag', path: [{ x: 1, y: 2 }] }, 'path'],
    ['an unknown key', { type: 'keypress', keys: ['Hyper_L'] }, 'Hyper_L'],
    ['type without text', { type: 'type' }, 'without text'],
    ['scroll with text amounts', { type: 'scroll', x: 1, y: 2, scroll_y: 'down' }, 'scroll_y'],
  ];
  it.each(malformed)('refuses %s as a bad answer naming it', async (_name, action, named) => {
    fake.reply({ json: oneAction(action) });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toContain(named);
  });

  it('refuses a computer call without a call_id', async () => {
    const response = fixture('preview-click');
    const call = (response.output as Record<string, unknown>[])[1]!;
    fake.reply({ json: { ...response, output: [{ ...call, call_id: undefined }] } });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error).toMatchObject({
      kind: 'bad_answer',
      message: expect.stringContaining('call_id'),
    });
  });
});

describe('openai provider: the GA computer tool', () => {
  it('sends {type: computer}, splits a batch into calls, and answers it with one screenshot', async () => {
    fake.reply({ json: fixture('ga-batch') }, { json: fixture('message-and-function-call') });
    const provider = createOpenAIProvider(context({ name: 'gpt-5.4' }));
    const reply = await provider.respond(request({ model: 'gpt-5.4' }));

    expect(sent()).toMatchObject({
      model: 'gpt-5.4',
      tools: [{ type: 'computer' }],
      reasoning: { summary: 'auto' },
    });
    expect(sent()).not.toHaveProperty('truncation');
    const base = 'call_Q7mX2pL9vK4tR8nB1cD6fH3j';
    expect(reply.output).toEqual([
      { type: 'reasoning', text: "**Filling the form**\n\nI'll select the name field and type." },
      {
        type: 'computer_call',
        call_id: `${base}.1`,
        action: { type: 'click', x: 640, y: 360, button: 'left' },
      },
      {
        type: 'computer_call',
        call_id: `${base}.2`,
        action: { type: 'keypress', keys: ['control', 'a'] },
      },
      {
        type: 'computer_call',
        call_id: `${base}.3`,
        action: { type: 'type', text: 'Ada Lovelace' },
      },
      // SHIFT held during the click.
      {
        type: 'computer_call',
        call_id: `${base}.4`,
        action: { type: 'key_down', keys: ['shift'] },
      },
      {
        type: 'computer_call',
        call_id: `${base}.5`,
        action: { type: 'click', x: 700, y: 420, button: 'left' },
      },
      { type: 'computer_call', call_id: `${base}.6`, action: { type: 'key_up', keys: ['shift'] } },
      { type: 'computer_call', call_id: `${base}.7`, action: { type: 'wait', ms: 0 } },
    ]);
    expect(reply.usage).toEqual({ input_tokens: 2874, output_tokens: 211, cached_tokens: 1024 });

    const outputs: ConversationItem[] = [1, 2, 3, 4, 5, 6, 7].map((n) => ({
      type: 'computer_call_output',
      call_id: `${base}.${n}`,
      image: n === 7 ? PNG_2 : PNG_1,
    }));
    await provider.respond(
      request({
        model: 'gpt-5.4',
        conversation: [firstMessage, ...outputs],
        continuation: { state: reply.state!, input: outputs },
      }),
    );
    expect(sent(1).previous_response_id).toBe(
      'resp_0a1f7c2e9b6d4e1d0068e2b4c19d4881a1b6f0e2c3d4a5b6',
    );
    expect(sent(1).input).toEqual([
      {
        type: 'computer_call_output',
        call_id: base,
        output: { type: 'computer_screenshot', image_url: url(PNG_2), detail: 'original' },
      },
    ]);
  });

  it('sends earlier calls back as batches of one when there is nothing to continue', async () => {
    fake.reply({ json: fixture('ga-batch') });
    const conversation: ConversationItem[] = [
      firstMessage,
      { type: 'computer_call', call_id: 'call_X.1', action: { type: 'right_click', x: 3, y: 4 } },
      { type: 'computer_call_output', call_id: 'call_X.1', image: PNG_2 },
    ];
    await createOpenAIProvider(context({ name: 'gpt-5.4' })).respond(request({ conversation }));
    expect((sent().input as unknown[]).slice(1)).toEqual([
      {
        type: 'computer_call',
        id: 'cu_call_X_1',
        call_id: 'call_X.1',
        status: 'completed',
        pending_safety_checks: [],
        actions: [{ type: 'click', button: 'right', x: 3, y: 4 }],
      },
      {
        type: 'computer_call_output',
        call_id: 'call_X.1',
        output: { type: 'computer_screenshot', image_url: url(PNG_2), detail: 'original' },
      },
    ]);
  });
});

describe('openai provider: messages, functions, safety checks, refusals', () => {
  it('returns messages and function calls, and sends the function output back', async () => {
    fake.reply({ json: fixture('message-and-function-call') }, { json: fixture('preview-click') });
    const provider = createOpenAIProvider(context());
    const reply = await provider.respond(request({ functions: [{ name: 'record_total' }] }));
    expect(reply.output).toEqual([
      { type: 'message', text: 'The order total is $42.17.' },
      {
        type: 'function_call',
        call_id: 'call_fN8kR3wQ1zL5vT7yP2mX9sJ4',
        name: 'record_total',
        arguments: '{"order_id":"A-1001","total":42.17}',
      },
    ]);
    const input: ConversationItem[] = [
      { type: 'function_call_output', call_id: 'call_fN8kR3wQ1zL5vT7yP2mX9sJ4', output: 'ok' },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Now log out.' }] },
    ];
    await provider.respond(request({ continuation: { state: reply.state!, input } }));
    expect(sent(1).input).toEqual([
      { type: 'function_call_output', call_id: 'call_fN8kR3wQ1zL5vT7yP2mX9sJ4', output: 'ok' },
      { role: 'user', content: [{ type: 'input_text', text: 'Now log out.' }] },
    ]);
  });

  it('shows a pending safety check as a message and acknowledges it with the screenshot', async () => {
    fake.reply({ json: fixture('safety-check') }, { json: fixture('preview-click') });
    const provider = createOpenAIProvider(context());
    const reply = await provider.respond(request());
    expect(reply.output).toEqual([
      {
        type: 'message',
        text: expect.stringContaining(
          'sensitive_domain: You are about to enter payment details',
        ) as unknown,
      },
      {
        type: 'computer_call',
        call_id: 'call_nE4wT6yU8iO0pA2sD4fG6hJ8',
        action: { type: 'type', text: '4111 1111 1111 1111' },
      },
    ]);
    const input: ConversationItem[] = [
      { type: 'computer_call_output', call_id: 'call_nE4wT6yU8iO0pA2sD4fG6hJ8', image: PNG_2 },
    ];
    await provider.respond(request({ continuation: { state: reply.state!, input } }));
    expect(sent(1).input).toEqual([
      {
        type: 'computer_call_output',
        call_id: 'call_nE4wT6yU8iO0pA2sD4fG6hJ8',
        output: { type: 'computer_screenshot', image_url: url(PNG_2) },
        acknowledged_safety_checks: [
          {
            id: 'cu_sc_67cd5e32c3d48190b1c2d3e4f5a6b7c8',
            code: 'sensitive_domain',
            message:
              'You are about to enter payment details. Please confirm that the user wants this.',
          },
        ],
      },
    ]);
  });

  it('turns a response cut short into a rejection that says why', async () => {
    fake.reply({ json: fixture('incomplete') });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toContain('max_output_tokens');
  });

  it('turns an error in a 200 body into a rejection carrying its message', async () => {
    fake.reply({ json: fixture('failed') });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('The model failed to generate a response.'),
    });
  });

  it('refuses a JSON answer without an output list', async () => {
    fake.reply({ json: { id: 'resp_x', object: 'response', status: 'completed' } });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error.kind).toBe('bad_answer');
  });
});

describe('openai provider: failures', () => {
  it('fails with auth before any request when there is no key', async () => {
    const provider = createOpenAIProvider(context({ apiKey: undefined }));
    const error = await modelFailure(provider.respond(request()));
    expect(error).toMatchObject({
      kind: 'auth',
      message: expect.stringContaining('set OPENAI_API_KEY'),
    });
    await expect(
      provider.chat({
        body: { messages: [{ role: 'user', content: 'hi' }] },
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ kind: 'auth' });
    expect(fake.requests).toHaveLength(0);
  });

  it('says what to set when OpenAI refuses the key, without showing it', async () => {
    fake.reply({ status: 401, json: fixture('error-401') });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain('cret');
  });

  it('passes on what OpenAI says about a refused request', async () => {
    fake.reply({ status: 400, json: fixture('error-400') });
    const error = await modelFailure(
      createOpenAIProvider(context()).respond(request({ temperature: 0.5 })),
    );
    expect(error).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining("'temperature' is not supported with this model"),
    });
  });

  it('reports a server that is not there as unreachable', async () => {
    const provider = createOpenAIProvider(
      context({ config: { provider: 'openai', base_url: `${NOBODY_LISTENS}/v1` } }),
    );
    const error = await modelFailure(provider.respond(request()));
    expect(error.kind).toBe('unreachable');
    expect(error.message).toContain(NOBODY_LISTENS);
  });

  it('gives up on a slow server with a timeout', async () => {
    fake.reply({ json: fixture('preview-click'), delayMs: 1500 });
    const started = Date.now();
    const error = await modelFailure(
      createOpenAIProvider(context({ timeoutMs: 200 })).respond(request()),
    );
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('calls an answer that is not JSON a bad answer', async () => {
    fake.reply({ text: '<html><body>502 Bad Gateway</body></html>' });
    const error = await modelFailure(createOpenAIProvider(context()).respond(request()));
    expect(error).toMatchObject({
      kind: 'bad_answer',
      message: expect.stringContaining('Bad Gateway'),
    });
  });
});

describe('openai provider: chat completions', () => {
  const signal = new AbortController().signal;

  it('forwards a chat request with the upstream model and returns the completion', async () => {
    fake.reply({ json: fixture('chat-completion') });
    const provider = createOpenAIProvider(
      context({
        name: 'vision',
        config: { provider: 'openai', base_url: fake.url, model: 'gpt-4o' },
      }),
    );
    const reply = await provider.chat({
      body: {
        model: 'vision',
        messages: [{ role: 'user', content: 'What is on screen?' }],
        max_tokens: 50,
      },
      signal,
    });
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent()).toEqual({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'What is on screen?' }],
      max_tokens: 50,
    });
    expect(reply).toEqual({ kind: 'json', completion: fixture('chat-completion') });
  });

  it('streams chunks as OpenAI sends them', async () => {
    const chunks = fixture('chat-stream') as unknown as unknown[];
    fake.reply({ sse: chunks });
    const reply = await createOpenAIProvider(context()).chat({
      body: { messages: [{ role: 'user', content: 'hi' }], stream: true },
      signal,
    });
    expect(reply.kind).toBe('stream');
    const received: unknown[] = [];
    if (reply.kind === 'stream') for await (const chunk of reply.chunks) received.push(chunk);
    expect(received).toEqual(chunks);
    expect(sent()).toMatchObject({ model: 'computer-use-preview', stream: true });
  });

  it('fails a streaming call up front when the key is refused', async () => {
    fake.reply({ status: 401, json: fixture('error-401') });
    const call = createOpenAIProvider(context()).chat({
      body: { messages: [{ role: 'user', content: 'hi' }], stream: true },
      signal,
    });
    await expect(call).rejects.toMatchObject({ kind: 'auth' });
  });

  it('refuses a chat answer without choices', async () => {
    fake.reply({ json: { error: null, object: 'list' } });
    const call = createOpenAIProvider(context()).chat({
      body: { messages: [{ role: 'user', content: 'hi' }] },
      signal,
    });
    await expect(call).rejects.toMatchObject({ kind: 'bad_answer' });
  });
});
