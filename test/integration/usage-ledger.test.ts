import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/shared/tasks.js';
import type { UsageList, UsageRow } from '../../src/shared/usage.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { startFakeLightcone } from '../helpers/fake-lightcone.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import { providerFixture } from '../helpers/provider-harness.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The usage ledger (docs/API.md §15) against fake providers speaking their real wire formats:
 * each row's tokens are exactly what the provider's own usage field said, for one Responses
 * call and for a task of several steps, whose usage is the sum of its rows.
 */

type Tokens = { input_tokens: number; output_tokens: number; cached_tokens: number };
type Json = Record<string, any>;
type Wire = {
  model: string;
  fake: () => FakeUpstream<any, any>;
  answer: Json;
  /** The tokens as the wire's own usage field defines them. */
  tokens: (usage: Json) => Tokens;
};

const PRICE = { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 };
const costOf = (t: Tokens) =>
  ((t.input_tokens - t.cached_tokens) * 2 + t.cached_tokens * 0.5 + t.output_tokens * 10) / 1e6;
const TOOL = { type: 'computer_use_preview', display_width: 1280, display_height: 720 };

const fakes: Record<string, FakeUpstream<any, any>> = {};
let server: TestServer;
let png: string;

/** OpenAI-style usage: input_tokens_details.cached_tokens is a part of input_tokens. */
const responsesTokens = (usage: Json): Tokens => ({
  input_tokens: usage.input_tokens,
  output_tokens: usage.output_tokens,
  cached_tokens: usage.input_tokens_details.cached_tokens,
});
const chatTokens = (usage: Json): Tokens => ({
  input_tokens: usage.prompt_tokens,
  output_tokens: usage.completion_tokens,
  cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
});
/** Anthropic counts cache reads and writes apart from input_tokens; all three are input. */
const anthropicTokens = (usage: Json): Tokens => ({
  input_tokens:
    usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
  output_tokens: usage.output_tokens,
  cached_tokens: usage.cache_read_input_tokens,
});

const withUsage = (answer: Json, usage: Json) => ({
  ...answer,
  usage: { ...answer.usage, ...usage },
});
const WIRES: Wire[] = [
  {
    model: 'openai',
    fake: () => fakes.openai!,
    answer: withUsage(providerFixture('openai', 'preview-click'), {
      input_tokens_details: { cached_tokens: 1024 },
    }),
    tokens: responsesTokens,
  },
  {
    model: 'lightcone',
    fake: () => fakes.lightcone!,
    answer: withUsage(providerFixture('lightcone', 'computer-call'), {
      input_tokens_details: { cached_tokens: 512 },
    }),
    tokens: responsesTokens,
  },
  {
    model: 'anthropic',
    fake: () => fakes.anthropic!,
    answer: withUsage(providerFixture('anthropic', 'message-computer-use'), {
      cache_creation_input_tokens: 90,
    }),
    tokens: anthropicTokens,
  },
  {
    model: 'chat',
    fake: () => fakes.chat!,
    answer: withUsage(providerFixture('openai-compatible', 'tool-call-click'), {
      prompt_tokens_details: { cached_tokens: 1000 },
    }),
    tokens: chatTokens,
  },
];

beforeAll(async () => {
  fakes.openai = await startFakeOpenAI();
  fakes.lightcone = await startFakeLightcone();
  fakes.anthropic = await startFakeAnthropic();
  fakes.chat = await startFakeChatCompletions();
  const entry = (provider: string, url: string) => ({
    provider,
    base_url: url,
    api_key: 'sk-fake',
  });
  server = await startTestServer({
    models: {
      default: 'chat',
      providers: {
        openai: { ...entry('openai', fakes.openai.url), price: PRICE },
        lightcone: { ...entry('lightcone', fakes.lightcone.url), price: PRICE },
        anthropic: { ...entry('anthropic', fakes.anthropic.url), price: PRICE },
        chat: { ...entry('openai-compatible', fakes.chat.url), model: 'fake-vlm', price: PRICE },
        unpriced: entry('openai-compatible', fakes.chat.url),
      } as never,
    },
    recording: { enabled: false },
  });
  const image = await sharp({
    create: { width: 64, height: 36, channels: 3, background: '#208040' },
  })
    .png()
    .toBuffer();
  png = `data:image/png;base64,${image.toString('base64')}`;
});
afterAll(async () => {
  await server?.close();
  for (const fake of Object.values(fakes)) await fake.close();
});

const usage = async (query = '', key?: string): Promise<UsageList> => {
  const answer = await server.request('GET', `/v1/usage${query}`, undefined, { key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body as UsageList;
};
const respond = async (model: string, key?: string) => {
  const input = [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Go' },
        { type: 'input_image', image_url: png },
      ],
    },
  ];
  const answer = await server.request(
    'POST',
    '/v1/responses',
    { model, tools: [TOOL], input },
    { key },
  );
  expect(answer.status, answer.text).toBe(200);
  return answer.body as { id: string; status: string; usage: Json };
};

describe('one row per Responses call', () => {
  it.each(WIRES)('$model: tokens exactly as its usage field, cost at its price', async (wire) => {
    wire.fake().reply({ json: wire.answer, delayMs: 60 });
    const response = await respond(wire.model);
    expect(response.status).toBe('completed');
    const { data } = await usage(`?response_id=${response.id}`);
    const tokens = wire.tokens(wire.answer.usage);
    expect(tokens.cached_tokens).toBeGreaterThan(0);
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      ...tokens,
      response_id: response.id,
      task_id: null,
      model: wire.model,
      images: 1,
      error: null,
    });
    expect(data[0]!.cost_usd).toBeCloseTo(costOf(tokens), 12);
    expect(data[0]!.latency_ms).toBeGreaterThanOrEqual(50);
    expect(response.usage).toMatchObject({
      input_tokens: tokens.input_tokens,
      output_tokens: tokens.output_tokens,
    });
  });

  it('has no cost without a price, and a row for a failed call with no tokens', async () => {
    fakes.chat!.reply({ json: chatCompletion({ content: 'hi' }) });
    const free = await respond('unpriced');
    expect((await usage(`?response_id=${free.id}`)).data[0]).toMatchObject({
      input_tokens: 1200,
      output_tokens: 30,
      cost_usd: null,
      provider: 'openai-compatible',
    });
    fakes.chat!.reply({ status: 400, json: { error: { message: 'image too large' } } });
    const failed = await respond('chat');
    expect(failed.status).toBe('failed');
    const [row] = (await usage(`?response_id=${failed.id}`)).data;
    expect(row).toMatchObject({ input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 });
    expect(row!.error).toMatch(/^model_/);
  });
});

/** The fake model's answer with a computer action (its 0–999 grid) or a final message. */
const click = (x: number, usage: Json) =>
  withUsage(
    chatCompletion({
      tool_calls: [
        {
          id: `c${x}`,
          type: 'function',
          function: { name: 'computer', arguments: JSON.stringify({ action: 'click', x, y: x }) },
        },
      ],
    }),
    usage,
  );
const STEP_USAGE = [
  { prompt_tokens: 1500, completion_tokens: 31, prompt_tokens_details: { cached_tokens: 0 } },
  { prompt_tokens: 2700, completion_tokens: 27, prompt_tokens_details: { cached_tokens: 1400 } },
  { prompt_tokens: 3900, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 2600 } },
];
/** Images the fake received in one chat-completions request. */
const imagesSent = (body: Json) =>
  (body.messages as Json[])
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((part: Json) => part.type === 'image_url').length;

describe('a task of several steps, rate-limited once', () => {
  let task: Task;
  let rows: UsageRow[];

  beforeAll(async () => {
    const fake = fakes.chat!;
    fake.requests.length = 0;
    fake.reply(
      { json: click(100, STEP_USAGE[0]!) },
      // The second call is refused once: it is tried again, and stays one call.
      {
        status: 429,
        headers: { 'retry-after-ms': '50' },
        json: { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } },
      },
      { json: click(200, STEP_USAGE[1]!) },
      { json: withUsage(chatCompletion({ content: 'Done.' }), STEP_USAGE[2]!) },
    );
    const computer = await server.request('POST', '/computers', {
      display: { width: 400, height: 300 },
    });
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Click twice',
      model: 'chat',
      computer_id: computer.body.id,
      stall_detection: false,
    });
    expect(started.status, started.text).toBe(200);
    task = await eventually(async () => {
      const current = (await server.request('GET', `/agent/tasks/${started.body.task_id}`))
        .body as Task;
      return current.exit_code !== null && current;
    }, 20_000);
    rows = (await usage(`?task_id=${task.task_id}`)).data;
    await server.request('DELETE', `/computers/${computer.body.id}`);
  });

  it("has one row per model call, each exactly the provider's usage, oldest first", () => {
    expect(task.status).toBe('completed');
    const sent = fakes.chat!.requests.map((request) => request.body as Json);
    expect(sent).toHaveLength(4);
    expect(sent[2]).toEqual(sent[1]);
    const answered = [sent[0]!, sent[2]!, sent[3]!];
    expect(rows).toHaveLength(3);
    rows.forEach((row, step) => {
      const tokens = chatTokens(STEP_USAGE[step]!);
      expect(row).toMatchObject({ ...tokens, task_id: task.task_id, model: 'chat', error: null });
      expect(row.cost_usd).toBeCloseTo(costOf(tokens), 12);
      expect(row.images).toBe(imagesSent(answered[step]!));
      expect(row.images).toBeGreaterThan(0);
    });
    expect(new Set(rows.map((row) => row.response_id)).size).toBe(3);
    expect([...rows].sort((a, b) => a.at.localeCompare(b.at))).toEqual(rows);
  });

  it("says on the task's events that it waits out the rate limit, and at which step", async () => {
    const events = (
      await (
        await SseReader.open(`${server.url}/agent/tasks/${task.task_id}/events`, server.key)
      ).all()
    ).map((event) => event.data as Json);
    const retries = events.filter((event) => event.type === 'model_retry');
    expect(retries).toEqual([
      expect.objectContaining({
        step: 2,
        error: expect.stringMatching(/answered HTTP 429: Rate limit reached$/),
        wait_ms: 50,
        attempt: 2,
        attempts: 3,
      }),
    ]);
    // Told between the first step's action and the second's, which came after the wait.
    const actions = events.flatMap((event, index) => (event.type === 'action' ? [index] : []));
    const told = events.findIndex((event) => event.type === 'model_retry');
    expect(actions).toHaveLength(2);
    expect(told).toBeGreaterThan(actions[0]!);
    expect(told).toBeLessThan(actions[1]!);
  });

  it("the task's usage is the sum of its rows", () => {
    const sum = (field: keyof Tokens) => rows.reduce((total, row) => total + row[field], 0);
    expect(task.usage).toMatchObject({
      input_tokens: 1500 + 2700 + 3900,
      output_tokens: 31 + 27 + 12,
      cached_tokens: 1400 + 2600,
    });
    expect(task.usage).toMatchObject({
      input_tokens: sum('input_tokens'),
      output_tokens: sum('output_tokens'),
      cached_tokens: sum('cached_tokens'),
    });
    const cost = rows.reduce((total, row) => total + row.cost_usd!, 0);
    expect(task.usage.cost_usd).toBeCloseTo(cost, 12);
  });

  it('filters by response and time, and pages oldest first', async () => {
    const [, second] = rows;
    expect((await usage(`?response_id=${second!.response_id}`)).data).toEqual([second]);
    const since = (await usage(`?task_id=${task.task_id}&since=${second!.at}`)).data;
    expect(since.map((row) => row.id)).toEqual(rows.slice(1).map((row) => row.id));
    expect((await usage('?since=2999-01-01T00:00:00Z')).data).toEqual([]);

    const all = await usage();
    expect(all.has_more).toBe(false);
    const paged: UsageRow[] = [];
    let after = '';
    for (;;) {
      const page = await usage(`?limit=2${after}`);
      paged.push(...page.data);
      if (!page.has_more) break;
      after = `&after=${page.last_id}`;
    }
    expect(paged).toEqual(all.data);
  });
});

describe('organizations', () => {
  it("each key sees its own organization's rows only", async () => {
    const other = server.core.keys.create('usage-other').key;
    fakes.chat!.reply({ json: chatCompletion({ content: 'theirs' }) });
    const theirs = await respond('chat', other);
    const seen = await usage('', other);
    expect(seen.data.map((row) => row.response_id)).toEqual([theirs.id]);
    const ours = await usage();
    expect(ours.data.length).toBeGreaterThan(0);
    expect(ours.data.map((row) => row.response_id)).not.toContain(theirs.id);
    expect((await usage(`?response_id=${theirs.id}`)).data).toEqual([]);
  });
});
