import { createServer } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicFixture, startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { startFakeLightcone } from '../helpers/fake-lightcone.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every provider through the real server: POST /v1/responses with a model whose base_url is a
 * fake upstream speaking that provider's wire format. What Benchtop sends upstream, what the
 * client gets back, and that the provider's key appears nowhere it must not.
 */

const fixture = (provider: string, name: string): unknown =>
  JSON.parse(
    readFileSync(
      join(import.meta.dirname, '..', 'fixtures', 'providers', provider, `${name}.json`),
      'utf8',
    ),
  );

type Fake = {
  url: string;
  requests: Array<{ path: string; headers: Record<string, unknown>; body: unknown }>;
  reply(...replies: Array<Record<string, unknown>>): void;
  close(): Promise<void>;
};

type Case = {
  provider: 'openai' | 'anthropic' | 'lightcone' | 'openai-compatible';
  model: string;
  start(): Promise<Fake>;
  /** An answer with a click, and what the client must see for it at 1280×720. */
  click: unknown;
  clicked: Record<string, unknown>;
  /** A plain text answer. */
  message: unknown;
  /** Where the key travels upstream. */
  auth(headers: Record<string, unknown>): unknown;
  path: string;
};

const CASES: Case[] = [
  {
    provider: 'openai',
    model: 'computer-use-preview',
    start: startFakeOpenAI as () => Promise<Fake>,
    click: fixture('openai', 'preview-click'),
    clicked: { type: 'click', x: 412, y: 88, button: 'left' },
    message: fixture('openai', 'message-and-function-call'),
    auth: (headers) => headers.authorization,
    path: '/v1/responses',
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    start: startFakeAnthropic as unknown as () => Promise<Fake>,
    click: anthropicFixture('message-computer-use'),
    clicked: { type: 'click', x: 512, y: 300, button: 'left' },
    message: anthropicFixture('message-end-turn'),
    auth: (headers) => headers['x-api-key'],
    path: '/v1/messages',
  },
  {
    provider: 'lightcone',
    model: 'tzafon.northstar-cua-fast',
    start: startFakeLightcone as unknown as () => Promise<Fake>,
    click: fixture('lightcone', 'computer-call'),
    // 0–999 → pixels: round(500 × 1279 / 999), round(120 × 719 / 999)
    clicked: { type: 'click', x: 640, y: 86, button: 'left' },
    message: fixture('lightcone', 'message'),
    auth: (headers) => headers.authorization,
    path: '/v1/responses',
  },
  {
    provider: 'openai-compatible',
    model: 'local-vlm',
    start: startFakeChatCompletions as unknown as () => Promise<Fake>,
    click: fixture('openai-compatible', 'tool-call-click'),
    // round(500 × 1279 / 999), round(300 × 719 / 999)
    clicked: { type: 'click', x: 640, y: 216, button: 'left' },
    message: fixture('openai-compatible', 'chat-completion'),
    auth: (headers) => headers.authorization,
    path: '/v1/chat/completions',
  },
];

const SECRET = 'sk-upstream-secret-4f9a1c7e';
const TOOL = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'browser',
};

const fakes = new Map<string, Fake>();
let server: TestServer;
let deadUrl: string;
let png: string;
const logs: string[] = [];

async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  process.env.BENCHTOP_TEST_UPSTREAM_KEY = SECRET;
  const providers: Record<string, Record<string, unknown>> = {};
  for (const c of CASES) {
    const fake = await c.start();
    fakes.set(c.provider, fake);
    providers[c.model] = {
      provider: c.provider,
      base_url: fake.url,
      api_key_env: 'BENCHTOP_TEST_UPSTREAM_KEY',
    };
    providers[`${c.model}-slow`] = { ...providers[c.model], timeout_ms: 300 };
  }
  deadUrl = `http://127.0.0.1:${await deadPort()}/v1`;
  providers.dead = {
    provider: 'openai',
    base_url: deadUrl,
    api_key_env: 'BENCHTOP_TEST_UPSTREAM_KEY',
  };
  providers.keyless = {
    provider: 'anthropic',
    base_url: 'http://127.0.0.1:9/',
    api_key_env: 'BENCHTOP_TEST_UNSET',
  };
  server = await startTestServer(
    { models: { default: 'dead', providers: providers as never } },
    { log: (line) => logs.push(line) },
  );
  const image = await sharp({
    create: { width: 1280, height: 720, channels: 3, background: '#208040' },
  })
    .png()
    .toBuffer();
  png = image.toString('base64');
});

afterAll(async () => {
  await server.close();
  for (const fake of fakes.values()) await fake.close();
  delete process.env.BENCHTOP_TEST_UPSTREAM_KEY;
});

const input = () => [
  {
    role: 'user',
    content: [
      { type: 'input_text', text: 'Search for Ada Lovelace' },
      { type: 'input_image', image_url: `data:image/png;base64,${png}` },
    ],
  },
];

describe.each(CASES)('$provider through POST /v1/responses', (c) => {
  it('sends the model, tool, screenshot and key upstream and answers contract items', async () => {
    const fake = fakes.get(c.provider)!;
    fake.requests.length = 0;
    fake.reply({ json: c.click });
    const first = await server.request('POST', '/v1/responses', {
      model: c.model,
      tools: [TOOL],
      instructions: 'You operate a browser.',
      input: input(),
    });
    expect(first.status).toBe(200);
    expect(first.body.status, JSON.stringify(first.body.error)).toBe('completed');
    const call = first.body.output.find((item: { type: string }) => item.type === 'computer_call');
    expect(call).toMatchObject({
      status: 'completed',
      pending_safety_checks: [],
      action: c.clicked,
    });
    expect(call.call_id).toMatch(/^call_/);
    expect(first.body.usage.input_tokens).toBeGreaterThan(0);

    const sent = fake.requests[0]!;
    expect(sent.path).toBe(c.path);
    expect(String(c.auth(sent.headers))).toContain(SECRET);
    const body = JSON.stringify(sent.body);
    expect(body).toContain(png);
    expect(body).toContain('You operate a browser.');
    expect(body).toContain('1280');
    expect(body).toContain('720');

    // The next turn: the click's screenshot goes back with the call it answers.
    fake.reply({ json: c.message });
    const second = await server.request('POST', '/v1/responses', {
      model: c.model,
      tools: [TOOL],
      previous_response_id: first.body.id,
      input: [
        {
          type: 'computer_call_output',
          call_id: call.call_id,
          output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${png}` },
        },
      ],
    });
    expect(second.body.status, JSON.stringify(second.body.error)).toBe('completed');
    expect(second.body.output.some((item: { type: string }) => item.type === 'message')).toBe(true);
    const next = JSON.stringify(fake.requests[1]!.body);
    // Either the upstream keeps the conversation (its response id) or it is sent whole.
    expect(next.includes('previous_response_id') || next.includes('Search for Ada Lovelace')).toBe(
      true,
    );
  });

  it('fails the response with an actionable error when the upstream refuses the key', async () => {
    const fake = fakes.get(c.provider)!;
    fake.reply({
      status: 401,
      json: { error: { message: `Incorrect API key provided: ${SECRET}` } },
    });
    const answer = await server.request('POST', '/v1/responses', { model: c.model, input: 'hi' });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_auth');
    expect(answer.body.error.message).toContain('BENCHTOP_TEST_UPSTREAM_KEY');
    const stored = await server.request('GET', `/v1/responses/${answer.body.id}`);
    expect(stored.text).not.toContain(SECRET);
  });

  it('answers after the upstream rate-limits the call once, having sent it twice', async () => {
    const fake = fakes.get(c.provider)!;
    fake.requests.length = 0;
    fake.reply(
      {
        status: 429,
        headers: { 'retry-after': '0' },
        json: { error: { message: 'Rate limit reached' } },
      },
      { json: c.message },
    );
    const answer = await server.request('POST', '/v1/responses', { model: c.model, input: 'hi' });
    expect(answer.body.status, JSON.stringify(answer.body.error)).toBe('completed');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
  });

  it('fails with model_timeout when the upstream is slower than timeout_ms', async () => {
    const fake = fakes.get(c.provider)!;
    fake.reply({ json: c.message, delayMs: 2000 });
    const answer = await server.request('POST', '/v1/responses', {
      model: `${c.model}-slow`,
      input: 'hi',
    });
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_timeout');
    expect(answer.body.error.message).toMatch(/did not answer within 0.3 s/);
  });

  it('fails with model_bad_answer when the upstream answers garbage', async () => {
    const fake = fakes.get(c.provider)!;
    fake.reply({ text: '<html>502 Bad Gateway</html>' });
    const answer = await server.request('POST', '/v1/responses', { model: c.model, input: 'hi' });
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_bad_answer');
  });
});

describe('providers that cannot be reached or have no key', () => {
  it('fails a response whose upstream is down, naming where it looked', async () => {
    const answer = await server.request('POST', '/v1/responses', { input: 'hi' });
    expect(answer.body.model).toBe('dead');
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_unreachable');
    expect(answer.body.error.message).toContain(new URL(deadUrl).origin);
    expect(answer.body.error.message).toContain('ECONNREFUSED');
  });

  it('fails before any HTTP when the key variable is unset, saying what to set', async () => {
    const answer = await server.request('POST', '/v1/responses', { model: 'keyless', input: 'hi' });
    expect(answer.body.status).toBe('failed');
    expect(answer.body.error.code).toBe('model_auth');
    expect(answer.body.error.message).toContain('BENCHTOP_TEST_UNSET');
  });

  it('chat completions answer 502 for a dead upstream and 504 for a slow one', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const down = await server.request('POST', '/v1/chat/completions', { model: 'dead', messages });
    expect(down.status).toBe(502);
    expect(down.body.code).toBe('model_error');
    fakes.get('openai')!.reply({ json: fixture('openai', 'chat-completion'), delayMs: 2000 });
    const slow = await server.request('POST', '/v1/chat/completions', {
      model: 'computer-use-preview-slow',
      messages,
    });
    expect(slow.status).toBe(504);
    expect(slow.body.code).toBe('model_timeout');
  });

  it('chat completions answer 429 with the wait the provider asked for, when its rate limit outlasts the tries', async () => {
    const fake = fakes.get('openai')!;
    fake.requests.length = 0;
    const limited = {
      status: 429,
      headers: { 'retry-after-ms': '40' },
      json: { error: { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' } },
    };
    fake.reply(limited, limited, limited);
    const answer = await server.request('POST', '/v1/chat/completions', {
      model: 'computer-use-preview',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.status, answer.text).toBe(429);
    expect(answer.body.code).toBe('rate_limited');
    expect(answer.body.message).toMatch(
      /HTTP 429: Rate limit reached for requests \(tried 3 times\)$/,
    );
    // An OpenAI SDK reads retry-after-ms first, then Retry-After in whole seconds.
    expect(answer.headers.get('retry-after-ms')).toBe('40');
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(fake.requests).toHaveLength(3);
  });

  it('never logs the key', () => {
    expect(logs.join('\n')).not.toContain(SECRET);
  });
});
