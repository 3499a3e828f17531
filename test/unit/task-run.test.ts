import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CreateResponseBody } from '../../src/shared/responses.js';
import {
  NOT_RUN_PAUSED,
  unstartedTaskFields,
  type Task,
  type TaskEvent,
} from '../../src/shared/tasks.js';
import { ActionRunner } from '../../src/main/core/actions/action-runner.js';
import type { ActionOutcome, ActionRequest } from '../../src/main/core/computers/action.js';
import { ActionFailure } from '../../src/main/core/errors.js';
import { resolveSettings } from '../../src/main/core/config.js';
import { ComputerEvents } from '../../src/main/core/events/computer-events.js';
import { TaskRun } from '../../src/main/core/agent/task-run.js';
import { ImageResolver } from '../../src/main/core/models/image-resolver.js';
import { ModelRegistry } from '../../src/main/core/models/model-registry.js';
import { ResponsesService } from '../../src/main/core/models/responses-service.js';
import { ScreenshotStore } from '../../src/main/core/screenshots/screenshot-store.js';
import type { ShellService } from '../../src/main/core/shell/shell-service.js';
import { openDatabase } from '../../src/main/core/store/database.js';
import { UsageLedger } from '../../src/main/core/store/usage-ledger.js';
import { ResponseStore } from '../../src/main/core/store/response-store.js';
import { TaskStore } from '../../src/main/core/store/task-store.js';
import { FakeOperator, fakeSession } from '../helpers/fake-operator.js';

const click = (x: number) => ({ type: 'computer_call', action: { type: 'click', x, y: 10 } });
const say = (text: string) => ({ output: [{ type: 'message', text }] });

/** What a test holds of one task: its run, the fake computer, and what the model was sent. */
type Harness = {
  run: TaskRun;
  operator: FakeOperator;
  /** The body of every model call, in order. */
  requests: CreateResponseBody[];
  events: TaskEvent[];
  /** The fake computer's events (where the approval gate speaks). */
  computerEvents: ComputerEvents;
  /** Resolves at the next event of this type (or at once if `count` of them came already). */
  event(type: TaskEvent['type'], count?: number): Promise<void>;
  done: Promise<void>;
};

let dir: string;
const closers: Array<() => void> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'benchtop-task-run-'));
});
afterEach(() => {
  for (const close of closers.splice(0)) close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A TaskRun on a FakeOperator with the scripted provider: the real store, action runner and
 * Responses service, nothing but the computer faked. `perform` decides how each action goes.
 */
async function startTask(
  turns: unknown[],
  perform?: (request: ActionRequest) => Promise<ActionOutcome>,
  /** Called as the task makes its nth model call (from 0), before the call. */
  beforeModelCall?: (n: number, run: TaskRun) => void,
): Promise<Harness> {
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const settings = resolveSettings({
    stored: {},
    env: {},
    flags: {
      models: { default: 'scripted', providers: { scripted: { provider: 'scripted', script } } },
    },
  });
  const db = openDatabase(join(dir, 'benchtop.db'));
  closers.push(() => db.close());
  const screenshots = new ScreenshotStore(join(dir, 'screenshots'));
  await screenshots.init();
  const baseUrl = () => 'http://127.0.0.1:1';
  const events = new ComputerEvents();
  const ledger = new UsageLedger(db);
  const responses = new ResponsesService(
    new ResponseStore(db),
    new ModelRegistry(() => settings.models, {}),
    new ImageResolver(screenshots, baseUrl, settings),
    ledger,
  );
  closers.push(() => responses.close());
  // Agent tasks run no shell commands: the runner is given none.
  const actions = new ActionRunner({ screenshots, baseUrl, events, shell: {} as ShellService });
  const store = new TaskStore(db);
  const operator = new FakeOperator({ perform });
  const session = fakeSession(operator, { workspace: dir });
  const at = new Date().toISOString();
  const task: Task = {
    task_id: 'task_unit',
    status: 'running',
    exit_code: null,
    computer_id: session.id,
    instruction: 'Click the target',
    model: 'scripted',
    steps: 0,
    max_steps: 20,
    created_at: at,
    updated_at: at,
    result: null,
    error: null,
    ...unstartedTaskFields(),
  };
  store.insert('local', task);

  const requests: CreateResponseBody[] = [];
  const create = responses.create.bind(responses);
  vi.spyOn(responses, 'create').mockImplementation((org, body, options) => {
    beforeModelCall?.(requests.length, run);
    requests.push(structuredClone(body));
    return create(org, body, options);
  });
  const run: TaskRun = new TaskRun(
    task,
    session,
    { store, responses, actions, events, screenshots, ledger },
    {
      org: 'local',
      temperature: undefined,
      screenshotMode: 'base64',
      ownsComputer: false,
      // The fake computer shows the same pixel after every action.
      stallDetection: false,
      endComputer: () => Promise.resolve(),
    },
  );
  const seen: TaskEvent[] = [];
  const waiters: Array<() => void> = [];
  run.follow((event) => {
    seen.push(event);
    for (const wake of waiters.splice(0)) wake();
  });
  const event = (type: TaskEvent['type'], count = 1) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (seen.filter((e) => e.type === type).length >= count) resolve();
        else waiters.push(check);
      };
      check();
    });
  return { run, operator, requests, events: seen, computerEvents: events, event, done: run.run() };
}

/** What the model was told besides the screenshot: the texts of the user items of a call. */
function told(body: CreateResponseBody): string[] {
  const input = body.input as Array<{ role?: string; content?: unknown }>;
  return input.flatMap((item) =>
    item.role === 'user' && typeof item.content === 'string' ? [item.content] : [],
  );
}

/** A gate: perform waits at `held` until open() is called; `reached` tells it is waiting. */
function gate() {
  let open!: () => void;
  let arrive!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  return {
    open,
    reached,
    held: async () => {
      arrive();
      await opened;
    },
  };
}

describe('TaskRun', () => {
  it('observes, asks the model and acts until the model answers', async () => {
    const task = await startTask([{ output: [click(10)] }, say('Clicked.')]);
    await task.done;
    expect(task.run.task).toMatchObject({ status: 'completed', result: 'Clicked.', steps: 2 });
    expect(task.operator.calls.filter((call) => call.startsWith('perform'))).toEqual([
      'perform:click',
    ]);
    expect(task.requests).toHaveLength(2);
    expect(task.events.map((event) => event.type)).toEqual([
      'started',
      'screenshot',
      'action',
      'action_result',
      'screenshot',
      'message',
      'completed',
    ]);
  });

  it('pause drops the rest of a turn; resume tells the model, with the messages sent meanwhile', async () => {
    const first = gate();
    let clicks = 0;
    const task = await startTask([{ output: [click(10), click(20)] }, say('Done.')], async () => {
      if (++clicks === 1) await first.held();
      return { result: {}, executedTabId: 'tab_fake' };
    });
    await first.reached;
    task.run.pause();
    task.run.message('Also say hi');
    first.open();
    // The click under way finishes; the turn's second click is dropped (its result says it was
    // not performed), and the task waits.
    await task.event('action_result', 2);
    expect(task.run.task.status).toBe('paused');
    task.run.resume();
    await task.done;

    expect(clicks).toBe(1);
    const types = task.events.map((event) => event.type);
    expect(types.slice(types.indexOf('action_result'), types.indexOf('resumed') + 1)).toEqual([
      'action_result',
      'action',
      'action_result',
      'resumed',
    ]);
    const results = task.events.filter((event) => event.type === 'action_result');
    expect(results.map((result) => result.status)).toEqual(['success', 'error']);
    expect(results[1]).toMatchObject({ error_message: NOT_RUN_PAUSED });
    expect(task.requests).toHaveLength(2);
    expect(told(task.requests[0]!)).toEqual([]);
    expect(told(task.requests[1]!)).toEqual([
      'The task was paused before your remaining actions ran; they were not performed.',
      'The user paused you and may have changed things on the computer. Continue from this screenshot.',
      'Also say hi',
    ]);
    expect(task.run.task).toMatchObject({ status: 'completed', result: 'Done.' });
  });

  it('a turn a pause kept from running entirely is told so, and a scripted model gives it again', async () => {
    const clicked: number[] = [];
    const task = await startTask(
      [{ output: [click(10)] }, { output: [click(20)] }, say('Done.')],
      (request) => {
        clicked.push((request.action as { at: { x: number } }).at.x);
        return Promise.resolve({ result: {}, executedTabId: 'tab_fake' });
      },
      // A person pauses while the model decides its first turn.
      (n, run) => n === 0 && run.pause(),
    );
    await task.event('action_result');
    expect(task.run.task.status).toBe('paused');
    task.run.resume();
    await task.done;

    expect(told(task.requests[1]!)[0]).toBe(
      'The task was paused before your actions ran; none of them was performed.',
    );
    // The first turn came again after the pause, so the run did all it was scripted to.
    expect(clicked).toEqual([10, 20]);
    expect(task.run.task).toMatchObject({ status: 'completed', result: 'Done.' });
  });

  it('a pause between turns holds the next model call until resume, which adds a note', async () => {
    const first = gate();
    const task = await startTask([{ output: [click(10)] }, say('Done.')], async () => {
      await first.held();
      return { result: {}, executedTabId: 'tab_fake' };
    });
    await first.reached;
    task.run.pause();
    first.open();
    await task.event('action_result');
    expect(task.requests).toHaveLength(1);
    task.run.message('Now the other one');
    expect(task.requests).toHaveLength(1);
    task.run.resume();
    await task.done;
    expect(told(task.requests[1]!)).toEqual([
      'The user paused you and may have changed things on the computer. Continue from this screenshot.',
      'Now the other one',
    ]);
  });

  it('a message sent while running reaches the model at its next call', async () => {
    const first = gate();
    const task = await startTask([{ output: [click(10)] }, say('Done.')], async () => {
      await first.held();
      return { result: {}, executedTabId: 'tab_fake' };
    });
    await first.reached;
    task.run.message('Use the left button');
    first.open();
    await task.done;
    expect(told(task.requests[1]!)).toEqual(['Use the left button']);
    expect(task.events.map((event) => event.type)).toContain('user_message');
  });

  it('tells the model of a failed action, and fails the task after three failures in a row', async () => {
    const results = ['fail', 'fail', 'ok', 'fail', 'fail', 'fail'];
    let n = 0;
    const task = await startTask(
      results.map((_, index) => ({ output: [click(index)] })),
      () =>
        results[n++] === 'ok'
          ? Promise.resolve({ result: {}, executedTabId: 'tab_fake' })
          : Promise.reject(new Error(`the button is gone (${n})`)),
    );
    await task.done;
    expect(task.run.task).toMatchObject({ status: 'failed', steps: 6 });
    expect(task.run.task.error).toMatch(/^3 actions in a row failed; the last: .*\(6\)/);
    expect(told(task.requests[1]!)).toEqual([
      expect.stringMatching(/^Your click action failed: .*\(1\)\. The remaining actions/),
    ]);
    const statuses = task.events.flatMap((event) =>
      event.type === 'action_result' ? [event.status] : [],
    );
    expect(statuses).toEqual(['error', 'error', 'success', 'error', 'error', 'error']);
  });

  it('skips the rest of a turn after a failed action', async () => {
    const task = await startTask([{ output: [click(1), click(2)] }, say('Done.')], () =>
      Promise.reject(new Error('no such element')),
    );
    await task.done;
    expect(task.operator.calls.filter((call) => call.startsWith('perform'))).toEqual([
      'perform:click',
    ]);
    expect(task.run.task.status).toBe('completed');
  });
});

describe('TaskRun and a person deciding its actions', () => {
  /** What the approval gate publishes on the computer's stream, for the task's action. */
  const asked = (approvalId: string) =>
    ({
      type: 'approval_required',
      approval_id: approvalId,
      task_id: 'task_unit',
      action: { type: 'type', text: 'hello' },
      policy_id: 'ask-typing',
      reason: 'typing needs a person',
      url: null,
      target: null,
      screenshot_url: null,
    }) as const;
  const decided = (approvalId: string, status: 'approved' | 'denied', note: string | null) =>
    ({
      type: 'approval_decided',
      approval_id: approvalId,
      task_id: 'task_unit',
      status,
      note,
      status_reason: null,
    }) as const;
  const typeHello = { type: 'computer_call', action: { type: 'type', text: 'hello' } };

  it('pauses for the approval, goes on after it, and a denial is told and fails nothing', async () => {
    const decision = gate();
    let n = 0;
    // Four denials in a row: more than the three failures that end a task.
    const task: Harness = await startTask(
      [...Array.from({ length: 4 }, () => ({ output: [typeHello] })), say('Gave up typing.')],
      async (request) => {
        const id = `appr_${++n}`;
        task.computerEvents.publish('comp_fake', asked(id));
        if (n === 1) await decision.held();
        task.computerEvents.publish('comp_fake', decided(id, 'denied', 'not now'));
        expect(request.taskId).toBe('task_unit');
        throw new ActionFailure('denied: not now');
      },
    );
    await decision.reached;
    expect(task.run.task).toMatchObject({ status: 'paused', paused_reason: 'approval' });
    expect(() => task.run.resume()).toThrow(/waits for approval appr_1/);
    decision.open();
    await task.done;

    expect(task.run.task).toMatchObject({ status: 'completed', result: 'Gave up typing.' });
    expect(told(task.requests[1]!)).toEqual([
      'Your type action was denied by a person: not now. It was not performed, nor the remaining actions of that turn; find another way, or finish.',
    ]);
    const types = task.events.map((event) => event.type);
    expect(types.slice(types.indexOf('action'), types.indexOf('action_result') + 1)).toEqual([
      'action',
      'approval_required',
      'paused',
      'approval_decided',
      'resumed',
      'action_result',
    ]);
    expect(task.events.find((event) => event.type === 'paused')).toMatchObject({
      reason: 'approval',
    });
    expect(task.events.find((event) => event.type === 'approval_required')).toMatchObject({
      computer_id: 'comp_fake',
      approval_id: 'appr_1',
      policy_id: 'ask-typing',
    });
  });

  it('a denial by a policy (nobody asked) says so', async () => {
    const task = await startTask([{ output: [typeHello] }, say('Ok.')], () =>
      Promise.reject(new ActionFailure('denied: policy no-typing')),
    );
    await task.done;
    expect(told(task.requests[1]!)[0]).toMatch(
      /^Your type action was denied by a policy: policy no-typing\./,
    );
    expect(task.events.some((event) => event.type === 'paused')).toBe(false);
  });

  it('a task the user paused before the approval stays paused for them after it', async () => {
    const held = gate();
    const task: Harness = await startTask([{ output: [typeHello] }, say('Ok.')], async () => {
      await held.held();
      task.computerEvents.publish('comp_fake', asked('appr_9'));
      task.computerEvents.publish('comp_fake', decided('appr_9', 'approved', null));
      return { result: {}, executedTabId: 'tab_fake' };
    });
    await held.reached;
    task.run.pause('Python SDK 2.39.0 (key sk_test…)');
    held.open();
    await task.event('action_result');
    // Still theirs: who paused it is not lost to the approval between.
    expect(task.run.task).toMatchObject({
      status: 'paused',
      paused_reason: 'user',
      paused_by: 'Python SDK 2.39.0 (key sk_test…)',
    });
    task.run.resume();
    await task.done;
    expect(task.run.task).toMatchObject({ status: 'completed', paused_by: null });
  });
});
