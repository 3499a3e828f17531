import { describe, expect, it } from 'vitest';
import {
  type ConversationItem,
  type ModelRequest,
  type ProviderContext,
} from '../../src/main/core/models/model-provider.js';
import { createLightconeProvider } from '../../src/main/core/models/providers/lightcone-provider.js';
import { startFakeLightcone } from '../helpers/fake-lightcone.js';
import { modelRequest } from '../helpers/model-request.js';
import {
  modelFailure,
  providerFixture,
  providerHarness,
  NOBODY_LISTENS,
} from '../helpers/provider-harness.js';

const KEY = 'lc_live_s3cr3t-key-0123456789';
const HINT = 'set LIGHTCONE_CLOUD_API_KEY in the environment Benchtop runs in';
const PNG = { mediaType: 'image/png', base64: 'iVBORw0KGgoAAAANSUhEUg' };
const PNG_URL = `data:image/png;base64,${PNG.base64}`;
const JPEG = { mediaType: 'image/jpeg', base64: '/9j/4AAQSkZJRg' };

const fixture = (name: string) => providerFixture('lightcone', name);

/** The recorded computer_call response with another action in it. */
function withAction(action: unknown): any {
  const body = fixture('computer-call');
  body.output[1].action = action;
  return body;
}

const { fake: cloud, context } = providerHarness({
  start: startFakeLightcone,
  context: (url) => ({
    name: 'tzafon.northstar-cua-fast',
    config: { provider: 'lightcone', base_url: url },
    apiKey: KEY,
    keyHint: HINT,
    timeoutMs: 5000,
    retries: 2,
  }),
});

function provider(overrides: Partial<ProviderContext> = {}) {
  return createLightconeProvider(context(overrides));
}

const TASK: ConversationItem = {
  type: 'message',
  role: 'user',
  content: [
    { type: 'text', text: 'Search for Ada Lovelace' },
    { type: 'image', image: PNG },
  ],
};

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return modelRequest({ model: 'tzafon.northstar-cua-fast', conversation: [TASK], ...overrides });
}

describe('lightcone provider: the request', () => {
  it('posts the task, screenshot, tools and settings to /v1/responses with the cloud key', async () => {
    cloud.reply({ json: fixture('computer-call') });
    await provider({
      config: { provider: 'lightcone', base_url: cloud.url, model: 'tzafon.northstar-cua' },
    }).respond(
      request({
        instructions: 'Work in the open tab.',
        functions: [{ name: 'done', description: 'Finish', parameters: { type: 'object' } }],
        temperature: 0.2,
        top_p: 0.9,
        max_output_tokens: 512,
      }),
    );
    const [sent] = cloud.requests;
    expect(sent!.method).toBe('POST');
    expect(sent!.path).toBe('/v1/responses');
    expect(sent!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent!.body).toEqual({
      model: 'tzafon.northstar-cua',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Search for Ada Lovelace' },
            { type: 'input_image', image_url: PNG_URL, detail: 'auto' },
          ],
        },
      ],
      tools: [
        { type: 'computer_use', display_width: 1280, display_height: 720, environment: 'browser' },
        { type: 'function', name: 'done', description: 'Finish', parameters: { type: 'object' } },
      ],
      instructions: 'Work in the open tab.',
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 512,
    });
  });

  it('names the Benchtop model upstream when no model is configured, and takes a /v1 base URL', async () => {
    cloud.reply({ json: fixture('message') });
    await provider({ config: { provider: 'lightcone', base_url: `${cloud.url}/v1/` } }).respond(
      request({ computer: null }),
    );
    expect(cloud.requests[0]!.path).toBe('/v1/responses');
    expect(cloud.requests[0]!.body.model).toBe('tzafon.northstar-cua-fast');
    expect(cloud.requests[0]!.body).not.toHaveProperty('tools');
    expect(cloud.requests[0]!.body).not.toHaveProperty('instructions');
  });

  it('continues upstream: previous_response_id and only the new items', async () => {
    cloud.reply({ json: fixture('message') });
    const output: ConversationItem = {
      type: 'computer_call_output',
      call_id: 'call_Qm2xV4nT1pLk',
      image: JPEG,
    };
    await provider().respond(
      request({
        conversation: [
          TASK,
          {
            type: 'computer_call',
            call_id: 'call_Qm2xV4nT1pLk',
            action: { type: 'click', x: 640, y: 86, button: 'left' },
          },
          output,
        ],
        continuation: { state: { response_id: 'resp_68a1f3c2d9e04b7f' }, input: [output] },
      }),
    );
    const body = cloud.requests[0]!.body;
    expect(body.previous_response_id).toBe('resp_68a1f3c2d9e04b7f');
    expect(body.input).toEqual([
      {
        type: 'computer_call_output',
        call_id: 'call_Qm2xV4nT1pLk',
        output: { type: 'input_image', image_url: `data:image/jpeg;base64,${JPEG.base64}` },
      },
    ]);
  });

  it('sends the whole conversation when there is no upstream state, actions back in 0–999', async () => {
    cloud.reply({ json: fixture('message') });
    await provider().respond(
      request({
        conversation: [
          { type: 'message', role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
          {
            ...TASK,
            content: [
              { type: 'text', text: 'Search' },
              { type: 'image', image: null },
            ],
          },
          { type: 'reasoning', text: 'Click the box.' },
          {
            type: 'computer_call',
            call_id: 'call_a',
            action: { type: 'click', x: 640, y: 86, button: 'left' },
          },
          { type: 'computer_call_output', call_id: 'call_a', image: null },
          {
            type: 'computer_call',
            call_id: 'call_b',
            action: { type: 'drag', x: 320, y: 180, end_x: 1279, end_y: 719 },
          },
          {
            type: 'computer_call',
            call_id: 'call_c',
            action: { type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 300 },
          },
          { type: 'computer_call_output', call_id: 'call_b', image: PNG },
          { type: 'function_call', call_id: 'call_d', name: 'lookup', arguments: '{"q":"x"}' },
          { type: 'function_call_output', call_id: 'call_d', output: 'found' },
          { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Searching.' }] },
        ],
        continuation: { state: {}, input: [] },
      }),
    );
    const input = cloud.requests[0]!.body.input;
    expect(cloud.requests[0]!.body).not.toHaveProperty('previous_response_id');
    expect(input.map((item: any) => item.type)).toEqual([
      'message',
      'message',
      'computer_call',
      'computer_call_output',
      'computer_call',
      'computer_call',
      'computer_call_output',
      'function_call',
      'function_call_output',
      'message',
    ]);
    expect(input[0]).toEqual({
      type: 'message',
      role: 'system',
      content: [{ type: 'input_text', text: 'Be brief.' }],
    });
    expect(input[1].content[1].type).toBe('input_text');
    expect(input[1].content[1].text).toMatch(/screenshot.*left out/);
    expect(input[2]).toEqual({
      type: 'computer_call',
      call_id: 'call_a',
      action: { type: 'click', x: 500, y: 119, button: 'left' },
      pending_safety_checks: [],
      status: 'completed',
    });
    expect(input[3].output.image_url).toMatch(/^data:image\/png;base64,/);
    expect(input[3].output.image_url).not.toBe(PNG_URL);
    expect(input[4].action).toEqual({ type: 'drag', x: 250, y: 250, end_x: 999, end_y: 999 });
    expect(input[5].action).toEqual({ type: 'scroll', x: 500, y: 500, scroll_x: 0, scroll_y: 300 });
    expect(input[6].output).toEqual({ type: 'input_image', image_url: PNG_URL });
    expect(input[7]).toEqual({
      type: 'function_call',
      call_id: 'call_d',
      name: 'lookup',
      arguments: '{"q":"x"}',
    });
    expect(input[8]).toEqual({ type: 'function_call_output', call_id: 'call_d', output: 'found' });
    expect(input[9]).toEqual({ type: 'message', role: 'assistant', content: 'Searching.' });
  });
});

describe('lightcone provider: the answer', () => {
  it('translates reasoning and a click into pixels, keeps the call id and the response id', async () => {
    cloud.reply({ json: fixture('computer-call') });
    const reply = await provider().respond(request());
    expect(reply.output).toEqual([
      {
        type: 'reasoning',
        text: 'The search box is at the top of the page. I will click it before typing.',
      },
      {
        type: 'computer_call',
        call_id: 'call_Qm2xV4nT1pLk',
        action: { type: 'click', x: 640, y: 86, button: 'left' },
      },
    ]);
    expect(reply.usage).toEqual({ input_tokens: 1893, output_tokens: 41, cached_tokens: 0 });
    expect(reply.state).toEqual({ response_id: 'resp_68a1f3c2d9e04b7f' });
  });

  it('returns messages and function calls', async () => {
    cloud.reply({ json: fixture('message') }, { json: fixture('function-call') });
    const message = await provider().respond(request());
    expect(message.output).toEqual([
      { type: 'message', text: 'The first result is the Wikipedia article on Ada Lovelace.' },
    ]);
    expect(message.usage).toEqual({ input_tokens: 2410, output_tokens: 17, cached_tokens: 0 });
    const call = await provider().respond(request({ functions: [{ name: 'done' }] }));
    expect(call.output).toEqual([
      {
        type: 'function_call',
        call_id: 'call_7Hs0dEwq2ZrB',
        name: 'done',
        arguments: '{"message":"Found the article and opened it."}',
      },
    ]);
  });

  it('leaves out call ids that do not look like call_… and then keeps no upstream state', async () => {
    const body = fixture('computer-call');
    body.output[1].call_id = 'cu-17';
    cloud.reply({ json: body });
    const reply = await provider().respond(request());
    expect(reply.output[1]).toEqual({
      type: 'computer_call',
      action: { type: 'click', x: 640, y: 86, button: 'left' },
    });
    expect(reply.state).toBeUndefined();
  });

  /** Every action type the cloud returns, and what it becomes (fixtures/…/actions.json). */
  const table = fixture('actions') as {
    display: { width: number; height: number };
    cases: Array<{ name: string; cloud: unknown; benchtop: unknown }>;
  };
  it.each(table.cases)('translates $name', async ({ cloud: action, benchtop }) => {
    cloud.reply({ json: withAction(action) });
    const computer = { ...table.display, environment: 'browser' };
    const reply = await provider().respond(request({ computer }));
    expect(reply.output[1]).toEqual({
      type: 'computer_call',
      call_id: 'call_Qm2xV4nT1pLk',
      action: benchtop,
    });
  });

  const malformed: Array<[string, unknown, RegExp]> = [
    [
      'an unknown action type',
      { type: 'teleport', x: 1, y: 2 },
      /unknown action type "teleport".*teleport/,
    ],
    ['a click without y', { type: 'click', x: 10 }, /y is missing/],
    ['a coordinate that is not a number', { type: 'move', x: 'left', y: 3 }, /x is not a number/],
    ['an unknown key', { type: 'keypress', keys: ['Hyper_Q'] }, /unknown key "Hyper_Q"/],
    [
      'an unknown button',
      { type: 'click', x: 1, y: 1, button: 'thumb' },
      /unknown mouse button "thumb"/,
    ],
    ['a navigate without url', { type: 'navigate' }, /url is not text/],
    ['an action that is not an object', 'click', /not an object/],
    ['a scroll without an amount', { type: 'scroll', x: 1, y: 1 }, /no scroll amount/],
    ['an hscroll without an amount', { type: 'hscroll', x: 1, y: 1 }, /no scroll amount/],
    ['a drag missing its end', { type: 'drag', x1: 1, y1: 2, x2: 3 }, /y2 is missing/],
  ];
  it.each(malformed)('fails as bad_answer on %s', async (_name, action, message) => {
    cloud.reply({ json: withAction(action) });
    const error = await modelFailure(provider().respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toMatch(message);
  });

  it('fails as bad_answer on a computer action when the request had no computer tool', async () => {
    cloud.reply({ json: fixture('computer-call') });
    const error = await modelFailure(provider().respond(request({ computer: null })));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toMatch(/no computer tool/);
  });

  it('fails as rejected when the cloud reports a failed response', async () => {
    cloud.reply({ json: fixture('failed') });
    const error = await modelFailure(provider().respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toContain('temporarily overloaded');
  });
});

describe('lightcone provider: failures', () => {
  it('fails with auth before any HTTP when no key is set', async () => {
    const error = await modelFailure(provider({ apiKey: undefined }).respond(request()));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain(HINT);
    expect(cloud.requests).toHaveLength(0);
  });

  it('says which key to set when the cloud refuses it, without the key', async () => {
    cloud.reply({ status: 401, json: fixture('error-401') });
    const error = await modelFailure(provider().respond(request()));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('LIGHTCONE_CLOUD_API_KEY');
    expect(error.message).not.toContain(KEY);
  });

  it('passes the cloud’s own message on other HTTP errors, key removed', async () => {
    cloud.reply({ status: 400, json: { error: { message: `bad input for key ${KEY}` } } });
    const error = await modelFailure(provider().respond(request()));
    expect(error.kind).toBe('rejected');
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain('bad input');
    expect(error.message).not.toContain(KEY);
  });

  it('reports garbage as bad_answer', async () => {
    cloud.reply({ text: '<html>502 Bad Gateway</html>' });
    const error = await modelFailure(provider().respond(request()));
    expect(error.kind).toBe('bad_answer');
    expect(error.message).toContain('not JSON');
  });

  it('times out on a slow cloud', async () => {
    cloud.reply({ delayMs: 2000, json: fixture('message') });
    const error = await modelFailure(provider({ timeoutMs: 200 }).respond(request()));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('timeout_ms');
  });

  it('reports a cloud that is not there as unreachable', async () => {
    const error = await modelFailure(
      provider({ config: { provider: 'lightcone', base_url: NOBODY_LISTENS } }).respond(request()),
    );
    expect(error.kind).toBe('unreachable');
    expect(error.message).toContain(NOBODY_LISTENS);
  });
});

describe('lightcone provider: chat', () => {
  const body = {
    model: 'tzafon.northstar-cua-fast',
    messages: [{ role: 'user' as const, content: 'Hi' }],
  };

  it('forwards a chat completion and returns the cloud’s answer', async () => {
    cloud.reply({ json: fixture('chat-completion') });
    const reply = await provider().chat({ body, signal: new AbortController().signal });
    expect(cloud.requests[0]!.path).toBe('/v1/chat/completions');
    expect(cloud.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(cloud.requests[0]!.body).toEqual(body);
    expect(reply.kind).toBe('json');
    if (reply.kind === 'json') {
      expect(reply.completion.choices[0]!.message.content).toBe('Hello! How can I help you today?');
    }
  });

  it('streams the cloud’s chunks', async () => {
    cloud.reply({ sse: fixture('chat-stream') });
    const reply = await provider().chat({
      body: { ...body, stream: true },
      signal: new AbortController().signal,
    });
    expect(cloud.requests[0]!.body.stream).toBe(true);
    expect(reply.kind).toBe('stream');
    const text: string[] = [];
    if (reply.kind === 'stream') {
      for await (const chunk of reply.chunks)
        text.push((chunk as any).choices[0].delta.content ?? '');
    }
    expect(text.join('')).toBe('Hello there!');
  });

  it('fails the streaming call itself when the key is refused', async () => {
    cloud.reply({ status: 401, json: fixture('error-401') });
    const error = await modelFailure(
      provider().chat({ body: { ...body, stream: true }, signal: new AbortController().signal }),
    );
    expect(error.kind).toBe('auth');
  });

  it('rejects a chat answer that is not a completion', async () => {
    cloud.reply({ json: { hello: 'world' } });
    const error = await modelFailure(
      provider().chat({ body, signal: new AbortController().signal }),
    );
    expect(error.kind).toBe('bad_answer');
  });
});
