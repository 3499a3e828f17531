import { describe, expect, it } from 'vitest';
import type { ConversationItem, ModelRequest } from '../../src/main/core/models/model-provider.js';
import { createOpenAICompatibleProvider } from '../../src/main/core/models/providers/openai-compatible-provider.js';
import { OUTPUT_ACTION_TYPES } from '../../src/shared/responses.js';
import { startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { modelRequest } from '../helpers/model-request.js';
import { providerFixture, providerHarness, NOBODY_LISTENS } from '../helpers/provider-harness.js';

const fixture = (name: string): unknown => providerFixture('openai-compatible', name);
const KEY = 'sk-local-very-secret-0123456789';
const SHOT = { mediaType: 'image/png', base64: 'iVBORw0KGgoAAAANSUhEUg==' };
const OLD_SHOT = { mediaType: 'image/png', base64: 'b2xkZXItc2NyZWVuc2hvdA==' };

const { fake, context } = providerHarness({
  start: startFakeChatCompletions,
  context: (url) => ({
    name: 'local-vlm',
    config: { provider: 'openai-compatible', base_url: url, model: 'ui-tars-1.5-7b' },
    apiKey: undefined,
    keyHint: 'set LOCAL_VLM_KEY',
    timeoutMs: 5_000,
    retries: 2,
  }),
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return modelRequest({
    model: 'local-vlm',
    instructions: 'Find the cheapest flight.',
    conversation: [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'text', text: 'Search for flights to Lisbon' },
          { type: 'image', image: SHOT },
        ],
      },
    ],
    ...overrides,
  });
}

type SentBody = {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: any } }[];
  [field: string]: unknown;
};
const sent = (index = 0) => fake.requests[index]!.body as SentBody;

describe('openai-compatible provider: what it sends', () => {
  it('posts the screenshot, instructions and the 0–999 computer tool to /chat/completions', async () => {
    fake.reply({ json: fixture('tool-call-click') });
    await createOpenAICompatibleProvider(context()).respond(request());

    const { method, path, headers } = fake.requests[0]!;
    expect([method, path]).toEqual(['POST', '/v1/chat/completions']);
    expect(headers.authorization).toBeUndefined();
    const body = sent();
    expect(body.model).toBe('ui-tars-1.5-7b');
    expect(body).not.toHaveProperty('temperature');
    const [system, user] = body.messages;
    expect(system!.role).toBe('system');
    expect(system!.content).toMatch(/^Find the cheapest flight\.\n\n/);
    expect(system!.content).toContain('1280x720 pixels');
    expect(system!.content).toContain('0-999 grid on both axes');
    expect(user).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Search for flights to Lisbon' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${SHOT.base64}` } },
      ],
    });
    const tool = body.tools![0]!;
    expect(tool.type).toBe('function');
    expect(tool.function.name).toBe('computer');
    expect(tool.function.description).toContain('1280x720');
    expect(tool.function.parameters.properties.action.enum).toEqual([...OUTPUT_ACTION_TYPES]);
    expect(tool.function.parameters.properties.x).toMatchObject({ minimum: 0, maximum: 999 });
    expect(Object.keys(tool.function.parameters.properties)).toEqual([
      ...['action', 'x', 'y', 'end_x', 'end_y', 'scroll_x', 'scroll_y', 'button', 'keys'],
      ...['text', 'url', 'ms', 'result'],
    ]);
  });

  it('sends the key as a bearer token only when one is set, and the settings when given', async () => {
    fake.reply({ json: fixture('tool-call-click') });
    const ctx = context({
      apiKey: KEY,
      config: { provider: 'openai-compatible', base_url: `${fake.url}/` },
    });
    await createOpenAICompatibleProvider(ctx).respond(
      request({ temperature: 0.2, top_p: 0.9, max_output_tokens: 256, instructions: null }),
    );
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = sent();
    expect(body.model).toBe('local-vlm');
    expect([body.temperature, body.top_p, body.max_tokens]).toEqual([0.2, 0.9, 256]);
    expect(body.messages[0]!.content).toMatch(/^You operate a browser computer/);
  });

  it('replays the conversation: calls as tool calls in 0–999, screenshots after the tool results', async () => {
    const conversation: ConversationItem[] = [
      ...request().conversation,
      { type: 'reasoning', text: 'The search box is at the top.' },
      {
        type: 'computer_call',
        call_id: 'call_a',
        action: { type: 'click', x: 1000, y: 600, button: 'left' },
      },
      { type: 'computer_call_output', call_id: 'call_a', image: null },
      { type: 'function_call', call_id: 'call_b', name: 'lookup', arguments: '{"q":"LIS"}' },
      {
        type: 'computer_call',
        call_id: 'call_c',
        action: { type: 'drag', x: 0, y: 0, end_x: 1279, end_y: 719 },
      },
      { type: 'function_call_output', call_id: 'call_b', output: 'Lisbon (LIS)' },
      { type: 'computer_call_output', call_id: 'call_c', image: OLD_SHOT },
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Only direct flights.' }] },
    ];
    fake.reply({ json: fixture('tool-call-click') });
    await createOpenAICompatibleProvider(context()).respond(
      request({ conversation, functions: [{ name: 'lookup', parameters: { type: 'object' } }] }),
    );

    const messages = sent().messages.slice(2);
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: 'The search box is at the top.',
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: {
              name: 'computer',
              arguments: '{"action":"click","x":781,"y":834,"button":"left"}',
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: expect.any(String) },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Screenshot after the action:' },
          { type: 'text', text: '(an earlier screenshot, left out)' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'lookup', arguments: '{"q":"LIS"}' },
          },
          {
            id: 'call_c',
            type: 'function',
            function: {
              name: 'computer',
              arguments: '{"action":"drag","x":0,"y":0,"end_x":999,"end_y":999}',
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: 'Lisbon (LIS)' },
      { role: 'tool', tool_call_id: 'call_c', content: expect.any(String) },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Screenshot after the action:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${OLD_SHOT.base64}` } },
          { type: 'text', text: 'Only direct flights.' },
        ],
      },
    ]);
    expect(sent().tools!.map((tool) => tool.function.name)).toEqual(['computer', 'lookup']);
  });

  it('asks again without tools when the server takes none, and keeps to text from then on', async () => {
    fake.reply(
      { status: 400, json: fixture('error-tools-refused') },
      { json: fixture('ui-tars-thought-action') },
      { json: fixture('ui-tars-thought-action') },
    );
    const provider = createOpenAICompatibleProvider(context());
    const conversation: ConversationItem[] = [
      ...request().conversation,
      { type: 'computer_call', call_id: 'call_a', action: { type: 'type', text: 'Lisbon' } },
      { type: 'computer_call_output', call_id: 'call_a', image: SHOT },
    ];
    const reply = await provider.respond(request({ conversation }));
    await provider.respond(request({ conversation }));

    expect(reply.output.at(-1)).toMatchObject({ type: 'computer_call', action: { type: 'click' } });
    expect(sent(0).tools).toHaveLength(1);
    for (const index of [1, 2]) {
      const body = sent(index);
      expect(body).not.toHaveProperty('tools');
      expect(body.messages[0]!.content).toContain('answer with one JSON object');
      expect(body.messages.slice(2)).toEqual([
        { role: 'assistant', content: '{"action":"type","text":"Lisbon"}' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Screenshot after the action:' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${SHOT.base64}` } },
          ],
        },
      ]);
    }
  });

  it('sends only function tools, and no system text about a computer, outside computer mode', async () => {
    fake.reply({ json: fixture('reasoning-message') });
    const reply = await createOpenAICompatibleProvider(context()).respond(
      request({
        computer: null,
        instructions: null,
        functions: [{ name: 'lookup', description: 'Look up' }],
      }),
    );
    expect(sent().messages.map((message) => message.role)).toEqual(['user']);
    expect(sent().tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Look up',
          parameters: { type: 'object', properties: {} },
        },
      },
    ]);
    expect(reply).toEqual({
      output: [
        { type: 'reasoning', text: 'The screenshot shows a results list with three entries.' },
        { type: 'message', text: 'The search returned 3 results.' },
      ],
      usage: { input_tokens: 1402, output_tokens: 39, cached_tokens: 0 },
    });
  });
});

describe('openai-compatible provider: failures', () => {
  it('needs a base_url, and says which setting, before any HTTP', async () => {
    const ctx = context({ config: { provider: 'openai-compatible' } });
    const failure = createOpenAICompatibleProvider(ctx).respond(request());
    await expect(failure).rejects.toMatchObject({
      name: 'ModelError',
      kind: 'rejected',
      message: expect.stringContaining('models.providers.local-vlm.base_url'),
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('reports a server that is not running', async () => {
    const ctx = context({
      config: { provider: 'openai-compatible', base_url: `${NOBODY_LISTENS}/v1` },
    });
    await expect(createOpenAICompatibleProvider(ctx).respond(request())).rejects.toMatchObject({
      kind: 'unreachable',
      message: expect.stringMatching(/could not reach .*local-vlm.*ECONNREFUSED/),
    });
  });

  it('gives up on a slow server after timeout_ms', async () => {
    fake.reply({ json: fixture('tool-call-click'), delayMs: 2_000 });
    const provider = createOpenAICompatibleProvider(context({ timeoutMs: 100 }));
    await expect(provider.respond(request())).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringContaining('timeout_ms'),
    });
  });

  it('reports garbage as a bad answer', async () => {
    fake.reply({ text: '<html>502 Bad Gateway</html>' });
    await expect(
      createOpenAICompatibleProvider(context()).respond(request()),
    ).rejects.toMatchObject({
      kind: 'bad_answer',
      message: expect.stringContaining('502 Bad Gateway'),
    });
  });

  it('reports a refused key with what to set, never the key', async () => {
    fake.reply({ status: 401, json: fixture('error-unauthorized') });
    const failure = createOpenAICompatibleProvider(context({ apiKey: KEY })).respond(request());
    await expect(failure).rejects.toMatchObject({ kind: 'auth' });
    const message = await failure.catch((error: Error) => error.message);
    expect(message).toContain('LOCAL_VLM_KEY');
    expect(message).not.toContain(KEY);
  });

  it('asks a keyless server that wants a key for one', async () => {
    fake.reply({ status: 401, json: fixture('error-unauthorized') });
    await expect(
      createOpenAICompatibleProvider(context()).respond(request()),
    ).rejects.toMatchObject({
      kind: 'auth',
      message: expect.stringContaining('set LOCAL_VLM_KEY'),
    });
  });

  it('reports an answer without a message', async () => {
    fake.reply({ json: { object: 'error', message: 'model not loaded' } });
    await expect(
      createOpenAICompatibleProvider(context()).respond(request()),
    ).rejects.toMatchObject({
      kind: 'bad_answer',
      message: expect.stringContaining('model not loaded'),
    });
  });
});

describe('openai-compatible provider: chat', () => {
  const body = { model: 'local-vlm', messages: [{ role: 'user' as const, content: 'Hi' }] };

  it('passes a completion through with the upstream model name', async () => {
    fake.reply({ json: fixture('chat-completion') });
    const reply = await createOpenAICompatibleProvider(context({ apiKey: KEY })).chat({
      body: { ...body, temperature: 0.5 },
      signal: new AbortController().signal,
    });
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent()).toEqual({ model: 'ui-tars-1.5-7b', messages: body.messages, temperature: 0.5 });
    expect(reply.kind === 'json' && reply.completion.choices[0]!.message.content).toBe(
      'Hello there',
    );
  });

  it('streams the chunks as they come', async () => {
    fake.reply({ sse: fixture('chat-stream') as unknown[] });
    const reply = await createOpenAICompatibleProvider(context()).chat({
      body: { ...body, stream: true },
      signal: new AbortController().signal,
    });
    expect(reply.kind).toBe('stream');
    const chunks: Record<string, unknown>[] = [];
    if (reply.kind === 'stream') for await (const chunk of reply.chunks) chunks.push(chunk);
    expect(sent().stream).toBe(true);
    const text = chunks.map((chunk: any) => chunk.choices[0].delta.content as string).join('');
    expect([chunks.length, text]).toEqual([4, 'Hello there']);
  });

  it('fails the call itself, not the stream, when the server refuses', async () => {
    fake.reply({ status: 401, json: fixture('error-unauthorized') });
    const failure = createOpenAICompatibleProvider(context()).chat({
      body: { ...body, stream: true },
      signal: new AbortController().signal,
    });
    await expect(failure).rejects.toMatchObject({ kind: 'auth' });
  });

  it('reports a non-stream answer that is not a chat completion', async () => {
    fake.reply({ json: { hello: 'world' } });
    const failure = createOpenAICompatibleProvider(context()).chat({
      body,
      signal: new AbortController().signal,
    });
    await expect(failure).rejects.toMatchObject({ kind: 'bad_answer' });
  });
});
