import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttentionItem } from '../../src/shared/approvals.js';
import { NOT_RUN_PAUSED, type Task, type TaskEvent } from '../../src/shared/tasks.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Supervising tasks by hand (docs/API.md §14): budgets, handoffs, takeovers and refused actions,
 * with real Chromium, scripted models and a fake chat-completions server whose requests are
 * read in their wire format.
 */

type Fake = Awaited<ReturnType<typeof startFakeChatCompletions>>;
let server: TestServer;
let fixtures: FixtureServer;
let fake: Fake;

const dir = mkdtempSync(join(tmpdir(), 'benchtop-supervision-scripts-'));
function script(name: string, actions: Array<Record<string, unknown>>): string {
  const path = join(dir, `${name}.json`);
  const turns = actions.map((action) => ({ output: [{ type: 'computer_call', action }] }));
  writeFileSync(path, JSON.stringify({ delay_ms: 0, turns }));
  return path;
}

/** The fake model's answers: a computer action (its 0–999 grid), a function call, a message. */
const computer = (args: Record<string, unknown>) =>
  chatCompletion({
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'computer', arguments: JSON.stringify(args) },
      },
    ],
  });
const requestHuman = (reason: string) =>
  chatCompletion({
    tool_calls: [
      {
        id: 'h1',
        type: 'function',
        function: { name: 'request_human', arguments: JSON.stringify({ reason }) },
      },
    ],
  });
const says = (content: string) => chatCompletion({ content });
/** The fake's usage of each answer (fake-chat-completions' default) and its price here. */
const PROMPT_TOKENS = 1200;
const COMPLETION_TOKENS = 30;
const CALL_COST = (PROMPT_TOKENS * 2 + COMPLETION_TOKENS * 10) / 1_000_000;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  fake = await startFakeChatCompletions();
  const scripted = (path: string) => ({ provider: 'scripted' as const, script: path });
  server = await startTestServer({
    models: {
      default: 'clicks',
      providers: {
        clicks: scripted(
          script('clicks', [
            { type: 'click', x: 10, y: 10 },
            { type: 'click', x: 20, y: 20 },
          ]),
        ),
        vlm: { provider: 'openai-compatible', base_url: fake.url, model: 'fake-vlm' },
      },
      // The earlier home of prices, kept on purpose: settings written before prices moved to
      // models.providers.<name>.price must still price a task (usage-ledger.test.ts uses the new).
      prices: { vlm: { input_per_million: 2, output_per_million: 10 } },
    },
    recording: { enabled: false },
  });
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

const post = (path: string, body?: unknown) => server.request('POST', path, body);
const task = async (id: string) => (await server.request('GET', `/agent/tasks/${id}`)).body as Task;
const eventsOf = (id: string): TaskEvent[] => server.core.tasks.events('local', id);
/** What GET /attention lists for this task. */
const waiting = async (id: string) =>
  ((await server.request('GET', '/attention')).body as AttentionItem[]).filter(
    (item) => item.task_id === id,
  );
const pausedTask = (id: string) =>
  eventually(async () => {
    const current = await task(id);
    return current.status === 'paused' && current;
  }, 15_000);
const finishedTask = (id: string) =>
  eventually(async () => {
    const current = await task(id);
    return current.exit_code !== null && current;
  }, 15_000);

/**
 * Waits for the task's first model request; while it has none, the error says where the task is
 * (its status and events), so a task that failed or stalled before asking shows why.
 */
const modelAsked = (id: string) =>
  eventually(async () => {
    if (fake.requests.length === 1) return true;
    const current = await task(id);
    const seen = eventsOf(id).map((event) => event.type);
    throw new Error(
      `${fake.requests.length} requests; task ${current.status} ${current.error ?? ''} after ${seen.join(', ')}`,
    );
  }, 10_000);

async function newComputer(): Promise<string> {
  const made = await post('/computers', { display: { width: 400, height: 300 } });
  expect(made.status, made.text).toBe(200);
  return made.body.id as string;
}

async function start(body: Record<string, unknown>): Promise<string> {
  const started = await post('/agent/tasks', { instruction: 'Do it', ...body });
  expect(started.status, started.text).toBe(200);
  return started.body.task_id as string;
}

/** An action a person sends from the window's live view. */
const asPerson = (computerId: string, segment: string, body: unknown) =>
  server.request('POST', `/computers/${computerId}/${segment}`, body, {
    headers: { 'x-benchtop-source': 'live-view' },
  });

/** Holds the fake's next answer until release() is called. */
function held() {
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  return { until, release };
}

describe('budgets', () => {
  it('max_tokens pauses the task; resume needs it raised, then the task goes on', async () => {
    const id = await start({ model: 'clicks', max_tokens: 1, stall_detection: false });
    const paused = await pausedTask(id);
    expect(paused).toMatchObject({
      paused_reason: 'budget',
      steps: 1,
      budgets: { max_tokens: 1, max_duration_seconds: null, max_cost_usd: null },
    });
    const used = paused.usage.input_tokens + paused.usage.output_tokens;
    expect(used).toBeGreaterThan(0);
    expect(eventsOf(id).filter((event) => event.type === 'budget_reached')).toEqual([
      expect.objectContaining({ budget: 'max_tokens', limit: 1, used }),
    ]);
    expect(eventsOf(id).at(-1)).toMatchObject({ type: 'paused', reason: 'budget' });
    expect(await waiting(id)).toEqual([expect.objectContaining({ type: 'budget', task_id: id })]);

    const refused = await post(`/agent/tasks/${id}/resume`);
    expect(refused.status).toBe(400);
    expect(refused.body.param).toBe('budgets.max_tokens');
    expect(refused.body.message).toContain(`used ${used} tokens of its max_tokens budget of 1`);
    expect(refused.body.message).toContain('{"budgets": {"max_tokens"');
    const tooLittle = await post(`/agent/tasks/${id}/resume`, { budgets: { max_tokens: used } });
    expect(tooLittle.status).toBe(400);
    expect((await task(id)).budgets.max_tokens).toBe(1);

    const resumed = await post(`/agent/tasks/${id}/resume`, {
      budgets: { max_tokens: 10_000_000 },
    });
    expect(resumed.body).toEqual({ status: 'running' });
    expect(await finishedTask(id)).toMatchObject({
      status: 'completed',
      steps: 3,
      paused_reason: null,
      budgets: { max_tokens: 10_000_000 },
    });
    expect(await waiting(id)).toEqual([]);
  });

  it('max_duration_seconds counts running time and pauses the task', async () => {
    const id = await start({
      model: 'clicks',
      max_duration_seconds: 0.001,
      stall_detection: false,
    });
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'budget' });
    const reached = eventsOf(id).find((event) => event.type === 'budget_reached');
    expect(reached).toMatchObject({ budget: 'max_duration_seconds', limit: 0.001 });
    expect((await post(`/agent/tasks/${id}/resume`, {})).status).toBe(400);
    await post(`/agent/tasks/${id}/resume`, { budgets: { max_duration_seconds: 3600 } });
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', steps: 3 });
  });

  it('max_cost_usd prices the tokens the provider reported; usage adds them up', async () => {
    fake.reply(
      { json: computer({ action: 'click', x: 100, y: 100 }) },
      { json: computer({ action: 'click', x: 200, y: 200 }) },
      { json: computer({ action: 'click', x: 300, y: 300 }) },
      { json: says('Clicked thrice.') },
    );
    const computerId = await newComputer();
    // One call costs CALL_COST: the second reaches the limit.
    const limit = CALL_COST * 1.5;
    const id = await start({
      model: 'vlm',
      computer_id: computerId,
      max_cost_usd: limit,
      stall_detection: false,
    });
    const paused = await pausedTask(id);
    expect(paused).toMatchObject({
      paused_reason: 'budget',
      steps: 2,
      usage: { input_tokens: 2 * PROMPT_TOKENS, output_tokens: 2 * COMPLETION_TOKENS },
    });
    expect(paused.usage.cost_usd).toBeCloseTo(2 * CALL_COST, 10);
    const reached = eventsOf(id).find((event) => event.type === 'budget_reached');
    expect(reached).toMatchObject({ budget: 'max_cost_usd', limit });

    await post(`/agent/tasks/${id}/resume`, { budgets: { max_cost_usd: 1 } });
    const done = await finishedTask(id);
    expect(done).toMatchObject({
      status: 'completed',
      result: 'Clicked thrice.',
      usage: { input_tokens: 4 * PROMPT_TOKENS, output_tokens: 4 * COMPLETION_TOKENS },
    });
    expect(done.usage.cost_usd).toBeCloseTo(4 * CALL_COST, 10);
    await server.request('DELETE', `/computers/${computerId}`);
  });
});

describe('handoff', () => {
  /** A person signs in on signin.html from the live view: a page, clicks, text and a password. */
  async function signIn(computerId: string, email: string): Promise<void> {
    const steps: Array<[string, unknown]> = [
      ['navigate', { url: `${fixtures.url}/signin.html` }],
      ['click', { x: 110, y: 25 }],
      ['type', { text: email }],
      ['click', { x: 110, y: 75 }],
      ['type', { text: 'hunter2-secret' }],
      ['hotkey', { keys: ['Enter'] }],
    ];
    for (const [segment, body] of steps) {
      const answer = await asPerson(computerId, segment, body);
      expect(answer.body.status, answer.text).toBe('success');
    }
  }

  it('the model calls request_human; on resume it is told what the person did, password masked', async () => {
    fake.reply({ json: requestHuman('Please sign in for me') }, { json: says('Signed in.') });
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId });
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'handoff' });
    expect(
      eventsOf(id).filter((e) => e.type === 'handoff_requested' || e.type === 'paused'),
    ).toEqual([
      expect.objectContaining({ type: 'handoff_requested', reason: 'Please sign in for me' }),
      expect.objectContaining({ type: 'paused', reason: 'handoff' }),
    ]);
    // The model was offered the function.
    expect(JSON.stringify(fake.requests[0]!.body)).toContain('"request_human"');

    await signIn(computerId, 'alice@example.com');
    // Acting from the live view does not make a handoff a takeover.
    expect((await task(id)).paused_reason).toBe('handoff');
    expect((await post(`/agent/tasks/${id}/resume`)).body).toEqual({ status: 'running' });
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', result: 'Signed in.' });

    const next = fake.requests[1]!.body as { messages: Array<Record<string, unknown>> };
    // The function's answer, as the tool message of its call.
    const answer = next.messages.find((message) => message.role === 'tool');
    const told = JSON.stringify(answer);
    expect(told).toContain(`visited ${fixtures.url}/signin.html`);
    expect(told).toContain('clicked at 110, 25 on textbox “Email”');
    expect(told).toContain('typed “alice@example.com”');
    expect(told).toContain('typed •••• (a password field)');
    expect(told).toMatch(/pressed enter/i);
    expect(JSON.stringify(next)).not.toContain('hunter2-secret');
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('POST /handoff pauses a running task the same way; the model hears of it in a message', async () => {
    const answer = held();
    fake.reply(
      { json: computer({ action: 'click', x: 500, y: 500 }), until: answer.until },
      { json: says('Carrying on.') },
    );
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId });
    await modelAsked(id);

    const handed = await post(`/agent/tasks/${id}/handoff`, { reason: 'I will sign in myself' });
    expect(handed.body).toEqual({ status: 'paused' });
    answer.release();
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'handoff' });
    const again = await post(`/agent/tasks/${id}/handoff`, { reason: 'twice' });
    expect(again.status).toBe(400);
    expect(again.body.message).toContain('already waits for a person');
    expect(eventsOf(id).find((event) => event.type === 'handoff_requested')).toMatchObject({
      reason: 'I will sign in myself',
    });
    expect(await waiting(id)).toEqual([
      expect.objectContaining({ type: 'handoff', task_id: id, computer_id: computerId }),
    ]);

    await signIn(computerId, 'bob@example.com');
    await post(`/agent/tasks/${id}/resume`);
    expect(await finishedTask(id)).toMatchObject({ status: 'completed' });
    const told = JSON.stringify(fake.requests[1]!.body);
    expect(told).toContain('so that a person could take over');
    expect(told).toContain('typed “bob@example.com”');
    expect(told).toContain('••••');
    expect(told).not.toContain('hunter2-secret');
    // The click held while the task was handed over never ran.
    expect(told).toContain('none of them was performed');
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('its computer does not idle out under the task: a slow model, then a person awaited', async () => {
    const slow = held();
    fake.reply(
      { json: requestHuman('Please check the page'), until: slow.until },
      { json: says('Checked.') },
    );
    const made = await post('/computers', {
      display: { width: 400, height: 300 },
      inactivity_timeout_seconds: 1,
    });
    const computerId = made.body.id as string;
    const status = async () =>
      (await server.request('GET', `/computers/${computerId}/status`)).body as {
        status: string;
        termination_reason?: string;
      };
    const id = await start({ model: 'vlm', computer_id: computerId });
    await modelAsked(id);
    // The model thinks for longer than the computer's idle timeout.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await status()).status).toBe('running');
    slow.release();
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'handoff' });
    // Nobody comes for a while: the computer waits with the task.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await status()).status).toBe('running');
    expect((await post(`/agent/tasks/${id}/resume`)).body).toEqual({ status: 'running' });
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', result: 'Checked.' });
    // The task over, the computer idles out as any other would.
    await eventually(async () => (await status()).status === 'terminated', 10_000);
    expect((await server.request('GET', `/computers/${computerId}`)).body).toMatchObject({
      termination_reason: 'idle_timeout',
    });
  });

  it('answers bad handoffs with a 4xx that says why', async () => {
    const id = await start({ model: 'clicks', stall_detection: false });
    const empty = await post(`/agent/tasks/${id}/handoff`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.param).toBe('reason');
    await finishedTask(id);
    const over = await post(`/agent/tasks/${id}/handoff`, { reason: 'too late' });
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/is completed; only a running or paused task/);
    expect((await post('/agent/tasks/task_nope/handoff', { reason: 'x' })).status).toBe(404);
  });
});

describe('takeover', () => {
  it('a person acting from the live view pauses a running task as taken over', async () => {
    const answer = held();
    fake.reply(
      { json: computer({ action: 'click', x: 500, y: 500 }), until: answer.until },
      { json: says('Done.') },
    );
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId });
    await modelAsked(id);
    // The window opening the computer lists its tabs: a person reading takes nothing over.
    const tabs = await server.request('GET', `/computers/${computerId}/tabs`, undefined, {
      headers: { 'x-benchtop-source': 'live-view' },
    });
    expect(tabs.body.status).toBe('success');
    expect((await task(id)).status).toBe('running');
    await asPerson(computerId, 'click', { x: 5, y: 5 });
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'takeover' });
    expect(eventsOf(id).at(-1)).toMatchObject({ type: 'paused', reason: 'takeover' });
    answer.release();
    // The click the model answered with is not made, and the timeline says so.
    const notRun = await eventually(() => {
      const tail = eventsOf(id).slice(-2);
      return tail[1]?.type === 'action_result' && tail;
    });
    expect(notRun).toMatchObject([
      { type: 'action', action: { type: 'click' } },
      { type: 'action_result', status: 'error', error_message: NOT_RUN_PAUSED },
    ]);
    await post(`/agent/tasks/${id}/resume`);
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', paused_reason: null });
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('a task the window paused for a person says takeover once they act', async () => {
    const answer = held();
    fake.reply(
      { json: computer({ action: 'click', x: 500, y: 500 }), until: answer.until },
      { json: says('Done.') },
    );
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId });
    await modelAsked(id);
    await post(`/agent/tasks/${id}/pause`);
    expect((await task(id)).paused_reason).toBe('user');
    await asPerson(computerId, 'click', { x: 5, y: 5 });
    expect((await task(id)).paused_reason).toBe('takeover');
    answer.release();
    await post(`/agent/tasks/${id}/resume`);
    expect(await finishedTask(id)).toMatchObject({ status: 'completed' });
    await server.request('DELETE', `/computers/${computerId}`);
  });
});

describe('refused actions (with the approval gate)', () => {
  afterAll(async () => {
    await server.request('PUT', '/policies', []);
  });

  it('a denied action is told to the model and fails nothing, however often', async () => {
    const policies = await server.request('PUT', '/policies', [
      { id: 'no-typing', when: { action_types: ['type'], task_only: true }, then: 'deny' },
    ]);
    expect(policies.status, policies.text).toBe(200);
    fake.reply(
      ...Array.from({ length: 4 }, () => ({ json: computer({ action: 'type', text: 'hello' }) })),
      { json: says('Typing is not allowed.') },
    );
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId, stall_detection: false });
    expect(await finishedTask(id)).toMatchObject({
      status: 'completed',
      result: 'Typing is not allowed.',
    });
    expect(JSON.stringify(fake.requests[1]!.body)).toContain(
      'Your type action was denied by a policy',
    );
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('a policy on every page holds what the task does there, not its looks at the screen', async () => {
    await server.request('PUT', '/policies', [
      { id: 'everywhere', when: { url_pattern: '**', task_only: true }, then: 'ask' },
    ]);
    fake.reply(
      { json: computer({ action: 'screenshot' }) },
      { json: computer({ action: 'click', x: 5, y: 5 }) },
      { json: says('Clicked.') },
    );
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId, stall_detection: false });
    // Its steps' screenshots and the model's own screenshot ran; the click waits for a person.
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'approval' });
    const asked = eventsOf(id).filter((event) => event.type === 'approval_required');
    expect(asked.map((event) => (event as { action: { type: string } }).action.type)).toEqual([
      'click',
    ]);
    await post(`/approvals/${(asked[0] as { approval_id: string }).approval_id}/approve`);
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', result: 'Clicked.' });
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('an action a person denies pauses the task for approval, then tells the model', async () => {
    await server.request('PUT', '/policies', [
      { id: 'ask-typing', when: { action_types: ['type'], task_only: true }, then: 'ask' },
    ]);
    fake.reply({ json: computer({ action: 'type', text: 'hello' }) }, { json: says('Fine.') });
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId, stall_detection: false });
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'approval' });
    const asked = eventsOf(id).find((event) => event.type === 'approval_required');
    expect(asked).toMatchObject({ computer_id: computerId, task_id: id, policy_id: 'ask-typing' });
    const approvalId = (asked as { approval_id: string }).approval_id;
    expect((await post(`/agent/tasks/${id}/resume`)).status).toBe(400);

    await post(`/approvals/${approvalId}/deny`, { note: 'not now' });
    expect(await finishedTask(id)).toMatchObject({ status: 'completed', result: 'Fine.' });
    expect(eventsOf(id).find((event) => event.type === 'approval_decided')).toMatchObject({
      approval_id: approvalId,
      status: 'denied',
      note: 'not now',
    });
    expect(JSON.stringify(fake.requests[1]!.body)).toContain(
      'Your type action was denied by a person: not now',
    );
    await server.request('DELETE', `/computers/${computerId}`);
  });

  it('a task cancelled while its action waits for a person ends there: it never says it resumed', async () => {
    await server.request('PUT', '/policies', [
      { id: 'ask-typing', when: { action_types: ['type'], task_only: true }, then: 'ask' },
    ]);
    fake.reply({ json: computer({ action: 'type', text: 'hello' }) });
    const computerId = await newComputer();
    const id = await start({ model: 'vlm', computer_id: computerId, stall_detection: false });
    expect(await pausedTask(id)).toMatchObject({ paused_reason: 'approval' });
    expect((await post(`/agent/tasks/${id}/cancel`)).status).toBe(200);
    expect(await finishedTask(id)).toMatchObject({ status: 'cancelled' });
    const kinds = eventsOf(id).map((event) => event.type);
    expect(kinds.slice(kinds.indexOf('approval_required'))).toEqual([
      'approval_required',
      'paused',
      'cancelled',
    ]);
    // Nobody is left to be asked about its action: it expired with the task, saying so.
    const asked = eventsOf(id).find((event) => event.type === 'approval_required') as {
      approval_id: string;
    };
    expect((await server.request('GET', `/approvals/${asked.approval_id}`)).body).toMatchObject({
      status: 'expired',
      status_reason: 'its task was cancelled before a decision',
    });
    const queue = (await server.request('GET', '/attention')).body as AttentionItem[];
    expect(queue.filter((item) => item.approval_id === asked.approval_id)).toEqual([]);
    await server.request('DELETE', `/computers/${computerId}`);
  });
});
