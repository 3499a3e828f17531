import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/core/store/database.js';
import { TaskStore } from '../../src/main/core/store/task-store.js';
import { NOT_RUN_PAUSED, type Task } from '../../src/shared/tasks.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { pageState } from '../helpers/page-state.js';
import { SseReader, type SseEvent } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'benchtop-task-scripts-'));
function script(name: string, turns: unknown[], delayMs = 0): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
  return path;
}
const call = (action: Record<string, unknown>) => ({
  output: [{ type: 'computer_call', action }],
});

type Fake = Awaited<ReturnType<typeof startFakeChatCompletions>>;
let server: TestServer;
let fixtures: FixtureServer;
let fake: Fake;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  fake = await startFakeChatCompletions();
  const scripted = (path: string) => ({ provider: 'scripted' as const, script: path });
  server = await startTestServer({
    models: {
      default: 'typist',
      providers: {
        typist: scripted(
          script('typist', [
            {
              output: [
                { type: 'reasoning', text: 'The field is on the right.' },
                { type: 'computer_call', action: { type: 'click', x: 500, y: 150 } },
              ],
            },
            call({ type: 'type', text: 'hello' }),
            { output: [{ type: 'message', text: 'Typed hello.' }] },
          ]),
        ),
        clicker: scripted(
          script(
            'clicker',
            Array.from({ length: 10 }, () => call({ type: 'click', x: 200, y: 150 })),
          ),
        ),
        slow: scripted(script('slow', [call({ type: 'wait', ms: 0 })], 1500)),
        answer: scripted(script('answer', [call({ type: 'answer', result: '42' })])),
        clumsy: scripted(
          script(
            'clumsy',
            Array.from({ length: 5 }, () => call({ type: 'keypress', keys: ['NoSuchKey'] })),
          ),
        ),
        vlm: { provider: 'openai-compatible', base_url: fake.url, model: 'fake-vlm' },
        dead: { provider: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      },
    },
  });
});
afterAll(async () => {
  await server.close();
  await fixtures.close();
  await fake.close();
});

const start = (body: Record<string, unknown>) => server.request('POST', '/agent/tasks', body);
const task = async (id: string) => (await server.request('GET', `/agent/tasks/${id}`)).body;
const finished = (id: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const current = await task(id);
    return current.exit_code !== null && current;
  }, timeoutMs);
const events = async (id: string) =>
  (await (await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key)).all()).map(
    (event) => event.data as Record<string, any>,
  );

/** Follows a task's events until one of this type arrives. */
async function nextEvent(id: string, type: string): Promise<void> {
  const reader = await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key);
  try {
    for (;;) {
      const event = await reader.next(10_000);
      if (!event) throw new Error(`the task ended before a ${type} event`);
      if ((event.data as { type: string }).type === type) return;
    }
  } finally {
    reader.close();
  }
}

async function fixtureComputer(): Promise<string> {
  const id = (await server.request('POST', '/computers', {})).body.id as string;
  await server.request('POST', `/computers/${id}/navigate`, {
    url: `${fixtures.url}/actions.html`,
  });
  return id;
}

describe('a task from start to end', () => {
  it('runs screenshot → model → action until the model answers, and the page shows it', async () => {
    const computer = await fixtureComputer();
    const started = await start({ instruction: 'Type hello in the field', computer_id: computer });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', computer_id: computer });
    expect(started.body.task_id).toMatch(/^task_/);

    const done = await finished(started.body.task_id);
    expect(done).toMatchObject({
      status: 'completed',
      exit_code: 0,
      computer_id: computer,
      instruction: 'Type hello in the field',
      model: 'typist',
      steps: 3,
      result: 'Typed hello.',
      error: null,
    });
    const state = await pageState(server, computer);
    expect(state.typed).toBe('hello');
    expect(state.events.some((line) => line.startsWith('click 500,150 left'))).toBe(true);

    const log = await events(started.body.task_id);
    expect(log.map((event) => event.type)).toEqual([
      'started',
      'screenshot',
      'reasoning',
      'action',
      'action_result',
      'screenshot',
      'action',
      'action_result',
      'screenshot',
      'message',
      'completed',
    ]);
    expect(log[0]).toMatchObject({ computer_id: computer, max_steps: 50, step: 0 });
    expect(log[1]!.screenshot_url).toMatch(/\/screenshots\/comp_.*\.png$/);
    expect(log[3]).toMatchObject({
      step: 1,
      action: { type: 'click', x: 500, y: 150, button: 'left' },
    });
    expect(log[4]).toMatchObject({ status: 'success', error_message: null });
    expect(log.at(-1)).toMatchObject({ type: 'completed', result: 'Typed hello.', step: 3 });
    // Each step is also a stored response of one chain.
    expect((await server.request('GET', '/computers/' + computer)).body.status).toBe('running');
    await server.request('DELETE', `/computers/${computer}`);
  });

  it('ends the computer it created, and lists tasks newest first', async () => {
    const started = await start({
      instruction: 'What is the answer?',
      model: 'answer',
      viewport_width: 1024,
      viewport_height: 600,
    });
    const done = await finished(started.body.task_id);
    expect(done).toMatchObject({ status: 'completed', result: '42', steps: 1 });
    const computer = await server.request('GET', `/computers/${started.body.computer_id}`);
    expect(computer.body.status).toBe('terminated');
    expect(computer.body.ended_by).toBe(`its task ${started.body.task_id}`);
    expect(computer.body.display).toMatchObject({ width: 1024, height: 600 });
    const list = (await server.request('GET', '/agent/tasks')).body as Array<{ task_id: string }>;
    expect(list[0]!.task_id).toBe(started.body.task_id);
  });

  it('streams every event as JSON from the start to the terminal one, then closes', async () => {
    const reader = await SseReader.post(`${server.url}/agent/tasks/stream`, server.key, {
      instruction: 'Answer',
      model: 'answer',
    });
    const log = (await reader.all(20_000)).map(
      (event: SseEvent) => event.data as Record<string, any>,
    );
    expect(log.map((event) => event.type)).toEqual([
      'started',
      'screenshot',
      'action',
      'completed',
    ]);
    expect(reader.ended).toBe(true);
    for (const event of log) {
      expect(event.task_id).toBe(log[0]!.task_id);
      expect(event.timestamp).toMatch(/Z$/);
    }
  });
});

describe('ends other than completed', () => {
  it('stops at max_steps with exit code 2', async () => {
    const started = await start({ instruction: 'Click forever', model: 'clicker', max_steps: 2 });
    expect(await finished(started.body.task_id)).toMatchObject({
      status: 'max_steps',
      exit_code: 2,
      steps: 2,
    });
    expect((await events(started.body.task_id)).at(-1)!.type).toBe('max_steps');
  });

  it('cancels with exit code 130 and ends the computer it created', async () => {
    const started = await start({ instruction: 'Wait', model: 'slow' });
    const cancelled = await server.request(
      'POST',
      `/agent/tasks/${started.body.task_id}/cancel`,
      undefined,
      { headers: SDK_HEADERS.currentPython },
    );
    expect(cancelled.body).toEqual({ status: 'cancelled' });
    const done = await finished(started.body.task_id);
    expect(done).toMatchObject({ status: 'cancelled', exit_code: 130 });
    expect((await events(started.body.task_id)).at(-1)).toMatchObject({
      type: 'cancelled',
      by: `Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`,
    });
    await eventually(
      async () =>
        (await server.request('GET', `/computers/${started.body.computer_id}`)).body.status ===
        'terminated',
    );
    const again = await server.request('POST', `/agent/tasks/${started.body.task_id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.message).toContain('cancelled');
  });

  it('fails with a readable error when the model provider is down', async () => {
    const started = await start({ instruction: 'x', model: 'dead' });
    const done = await finished(started.body.task_id);
    expect(done).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(done.error).toMatch(/could not reach .*127\.0\.0\.1:9/);
    expect((await events(started.body.task_id)).at(-1)).toMatchObject({
      type: 'failed',
      error: done.error,
    });
  });

  it('a failed task waits for a person until dismissed; only a failed one can be', async () => {
    const started = await start({ instruction: 'x', model: 'dead' });
    const id = started.body.task_id as string;
    await finished(id);
    const queue = async () =>
      ((await server.request('GET', '/attention')).body as Array<{ type: string; task_id: string }>)
        .filter((item) => item.task_id === id)
        .map((item) => item.type);
    expect(await queue()).toEqual(['failed']);

    const dismissed = await server.request('POST', '/attention/dismiss', { task_id: id });
    expect(dismissed.status, dismissed.text).toBe(204);
    expect(await queue()).toEqual([]);
    // Twice is the same; the task itself is unchanged.
    expect((await server.request('POST', '/attention/dismiss', { task_id: id })).status).toBe(204);
    expect((await server.request('GET', `/agent/tasks/${id}`)).body.status).toBe('failed');

    const running = await start({ instruction: 'Wait', model: 'slow' });
    const refused = await server.request('POST', '/attention/dismiss', {
      task_id: running.body.task_id,
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'invalid_request', param: 'task_id' });
    expect(refused.body.message).toContain('is running: only a failed task is dismissed');
    await server.request('POST', `/agent/tasks/${running.body.task_id}/cancel`);
    const unknown = await server.request('POST', '/attention/dismiss', { task_id: 'task_nope' });
    expect(unknown.status).toBe(404);
    const bad = await server.request('POST', '/attention/dismiss', {});
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe('task_id');
  });

  it('fails when its computer is deleted mid-task', async () => {
    const computer = await fixtureComputer();
    const started = await start({ instruction: 'Wait', model: 'slow', computer_id: computer });
    await nextEvent(started.body.task_id, 'screenshot');

    await server.request('DELETE', `/computers/${computer}`);
    const done = await finished(started.body.task_id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain(computer);
  });

  it('reports a failed action to the model and fails after three in a row', async () => {
    const started = await start({ instruction: 'Press a key', model: 'clumsy' });
    const done = await finished(started.body.task_id);
    expect(done).toMatchObject({ status: 'failed', steps: 3 });
    expect(done.error).toMatch(/3 actions in a row failed.*NoSuchKey/);
    const results = (await events(started.body.task_id)).filter((e) => e.type === 'action_result');
    expect(results.map((e) => e.status)).toEqual(['error', 'error', 'error']);
  });
});

describe('steering: pause, a person at the computer, messages, resume', () => {
  it('holds every action while paused, lets a person click, and tells the model on resume', async () => {
    const computer = await fixtureComputer();
    const computerEvents = await SseReader.open(
      `${server.url}/computers/${computer}/events`,
      server.key,
    );
    // The model clicks the target (0–999 space: 156,208 → pixels 200,150), then ends. Its second
    // answer is held until the task is paused: that turn's click must be dropped.
    const click = {
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'computer', arguments: '{"action":"click","x":156,"y":208}' },
        },
      ],
    };
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    fake.requests.length = 0;
    fake.reply(
      { json: chatCompletion(click) },
      { json: chatCompletion({ reasoning_content: 'Once more.', ...click }), until: paused },
      { json: chatCompletion(click) },
      { json: chatCompletion({ content: 'Done clicking.' }) },
    );
    const started = await start({
      instruction: 'Click the target',
      model: 'vlm',
      computer_id: computer,
    });
    const id = started.body.task_id as string;
    const taskEvents = await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key);
    const nextOf = async (type: string) => {
      for (;;) {
        const event = (await taskEvents.next(10_000))!.data as { type: string };
        if (event.type === type) return;
      }
    };
    // The second turn's model call is in flight.
    await eventually(() => fake.requests.length === 2, 10_000);
    const pause = await server.request('POST', `/agent/tasks/${id}/pause`, undefined, {
      headers: SDK_HEADERS.currentPython,
    });
    expect(pause.body).toEqual({ status: 'paused' });
    expect(await task(id)).toMatchObject({
      status: 'paused',
      paused_reason: 'user',
      paused_by: `Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`,
    });
    release();
    // The held answer arrived while paused: the task reports its reasoning and drops its click.
    await nextOf('reasoning');
    const person = await server.request('POST', `/computers/${computer}/click`, {
      x: 450,
      y: 150,
      request_id: 'req_person',
    });
    expect(person.body.status).toBe('success');
    const message = await server.request(
      'POST',
      `/agent/tasks/${id}/messages`,
      { message: 'Also say hi' },
      { headers: { 'x-benchtop-source': 'live-view' } },
    );
    expect(message.body).toEqual({ status: 'paused' });
    expect(fake.requests.length).toBe(2);
    expect(
      (await pageState(server, computer)).events.some((line) => line.includes('on field')),
    ).toBe(true);

    const resumed = await server.request('POST', `/agent/tasks/${id}/resume`, undefined, {
      headers: SDK_HEADERS.currentTypeScript,
    });
    expect(resumed.body).toEqual({ status: 'running' });
    expect(await task(id)).toMatchObject({ paused_reason: null, paused_by: null });
    const done = await finished(id);
    expect(done.status).toBe('completed');
    const next = JSON.stringify(fake.requests[2]!.body);
    expect(next).toContain('Also say hi');
    expect(next).toContain('may have changed things');
    expect(next).toContain('none of them was performed');
    // Nothing of the task reached the computer while it was paused: it did nothing between pause
    // and resume but report the held answer (its click shown as not performed), and the person's
    // click came between the task's two.
    const all = await events(id);
    const log = all.map((e) => e.type);
    expect(log).toContain('resumed');
    expect(log.slice(log.indexOf('paused'), log.indexOf('resumed'))).toEqual([
      'paused',
      'reasoning',
      'action',
      'action_result',
      'user_message',
    ]);
    expect(all[log.indexOf('paused') + 3]).toMatchObject({ error_message: NOT_RUN_PAUSED });
    // Who steered it, on its timeline.
    const key = `key ${server.key.slice(0, 7)}…`;
    expect(all[log.indexOf('paused')]).toMatchObject({
      reason: 'user',
      by: `Python SDK 2.39.0 (${key})`,
    });
    expect(all[log.indexOf('user_message')]).toMatchObject({
      text: 'Also say hi',
      by: `a person in the window (${key})`,
    });
    expect(all[log.indexOf('resumed')]).toMatchObject({ by: `TypeScript SDK 0.14.0 (${key})` });
    const performed = all.filter((e) => e.type === 'action_result' && e.status === 'success');
    expect(performed).toHaveLength(2);
    const clicks: string[] = [];
    while (clicks.length < 3) {
      const event = (await computerEvents.next(10_000))!.data as {
        type: string;
        request_id: string;
        action?: { type: string };
      };
      if (event.type === 'action_request' && event.action?.type === 'click') {
        clicks.push(event.request_id === 'req_person' ? 'person' : 'task');
      }
    }
    expect(clicks).toEqual(['task', 'person', 'task']);
    computerEvents.close();
    taskEvents.close();
    await server.request('DELETE', `/computers/${computer}`);
  });
});

describe('bad input', () => {
  it('answers 400 or 404 naming the problem', async () => {
    const finishedTask = (await start({ instruction: 'x', model: 'answer' })).body
      .task_id as string;
    await finished(finishedTask);
    const running = (await start({ instruction: 'x', model: 'slow' })).body.task_id as string;
    const cases: Array<[string, string, unknown, number, string | undefined, RegExp]> = [
      ['POST', '/agent/tasks', {}, 400, 'instruction', /instruction is required/],
      ['POST', '/agent/tasks', { instruction: '  ' }, 400, 'instruction', /≥ 1 characters/],
      [
        'POST',
        '/agent/tasks',
        { instruction: 'x', model: 'nope' },
        400,
        'model',
        /unknown model "nope"/,
      ],
      ['POST', '/agent/tasks', { instruction: 'x', max_steps: 501 }, 400, 'max_steps', /≤ 500/],
      [
        'POST',
        '/agent/tasks',
        { instruction: 'x', computer_id: 'comp_nothing' },
        404,
        'computer_id',
        /comp_nothing/,
      ],
      [
        'POST',
        `/agent/tasks/${finishedTask}/pause`,
        undefined,
        400,
        undefined,
        /is completed; only a running task/,
      ],
      [
        'POST',
        `/agent/tasks/${running}/resume`,
        undefined,
        400,
        undefined,
        /is running; only a paused task/,
      ],
      [
        'POST',
        `/agent/tasks/${finishedTask}/messages`,
        { message: 'hi' },
        400,
        undefined,
        /is completed/,
      ],
      [
        'POST',
        `/agent/tasks/${running}/messages`,
        { message: '' },
        400,
        'message',
        /≥ 1 characters/,
      ],
      ['GET', '/agent/tasks/task_nothing', undefined, 404, undefined, /task_nothing/],
      ['POST', '/agent/tasks/task_nothing/pause', undefined, 404, undefined, /task_nothing/],
    ];
    for (const [method, path, body, status, param, message] of cases) {
      const answer = await server.request(method, path, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(answer.body.param).toBe(param);
      expect(answer.body.message).toMatch(message);
    }
    await server.request('POST', `/agent/tasks/${running}/cancel`);
  });
});

describe('other computers', () => {
  it('keeps the computer of a persistent task running after the task', async () => {
    const started = await start({ instruction: 'x', model: 'answer', persistent: true });
    await finished(started.body.task_id);
    const computer = await server.request('GET', `/computers/${started.body.computer_id}`);
    expect(computer.body).toMatchObject({ status: 'running', persistent: true });
    await server.request('DELETE', `/computers/${started.body.computer_id}`);
  });

  it('runs on a desktop computer', async () => {
    const started = await start({ instruction: 'x', model: 'answer', kind: 'desktop' });
    expect(started.status, started.text).toBe(200);
    const done = await finished(started.body.task_id, 30_000);
    expect(done).toMatchObject({ status: 'completed', result: '42' });
    const shot = (await events(started.body.task_id)).find((e) => e.type === 'screenshot');
    expect(shot!.screenshot_url).toMatch(/\.png$/);
  });
});

describe('durability', () => {
  it('marks a task that a crashed run left running as failed with shutdown', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-crashed-'));
    const db = openDatabase(join(dataDir, 'benchtop.sqlite'));
    const at = new Date().toISOString();
    const store = new TaskStore(db);
    store.insert('local', {
      task_id: 'task_crashed',
      status: 'running',
      exit_code: null,
      computer_id: 'comp_gone',
      instruction: 'x',
      model: 'slow',
      steps: 2,
      max_steps: 50,
      created_at: at,
      updated_at: at,
      result: null,
      error: null,
      // A row stored before paused_reason, usage and budgets existed: read with their defaults.
    } as Task);
    store.append('task_crashed', 0, {
      type: 'started',
      task_id: 'task_crashed',
      step: 0,
      timestamp: at,
      computer_id: 'comp_gone',
      max_steps: 50,
    });
    db.close();
    const restarted = await startTestServer({}, { dataDir });
    try {
      const after = (await restarted.request('GET', '/agent/tasks/task_crashed')).body;
      expect(after).toMatchObject({ status: 'failed', exit_code: 1, steps: 2 });
      expect(after.error).toMatch(/^shutdown/);
      const reader = await SseReader.open(
        `${restarted.url}/agent/tasks/task_crashed/events`,
        restarted.key,
      );
      expect((await reader.all()).map((e) => (e.data as { type: string }).type)).toEqual([
        'started',
        'failed',
      ]);
    } finally {
      await restarted.close();
    }
  });

  it('keeps tasks and their events across a restart; a running one ends failed with shutdown', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-tasks-'));
    const models = {
      default: 'slow',
      providers: {
        slow: {
          provider: 'scripted' as const,
          script: script('slow2', [call({ type: 'wait', ms: 0 })], 3000),
        },
      },
    };
    const first = await startTestServer({ models }, { dataDir });
    const id = (await first.request('POST', '/agent/tasks', { instruction: 'Wait' })).body
      .task_id as string;
    await first.close();
    const second = await startTestServer({ models }, { dataDir });
    try {
      const after = (await second.request('GET', `/agent/tasks/${id}`)).body;
      expect(after).toMatchObject({ status: 'failed', exit_code: 1 });
      expect(after.error).toMatch(/^shutdown/);
      const reader = await SseReader.open(`${second.url}/agent/tasks/${id}/events`, second.key);
      const log = (await reader.all()).map((e) => e.data as { type: string });
      expect(log[0]!.type).toBe('started');
      expect(log.at(-1)!.type).toBe('failed');
    } finally {
      await second.close();
    }
  });
});
