import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StallKind, Task, TaskEvent } from '../../src/shared/tasks.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Stall detection (docs/API.md §14) with real Chromium and scripted models on stall.html: loops of
 * each kind are caught within three steps of their start, and varied clean tasks never are.
 */

type Action = Record<string, unknown>;
/** A scripted task: its actions, one a turn, and where its loop begins (step numbers from 1). */
type Plan = { model: string; actions: Action[]; loop?: { kind: StallKind; start: number } };

const LOOPS_OF_EACH_KIND = 10;
const CLEAN_TASKS = 20;
/** Computers running tasks at once: on two cores, more only make each step slower. */
const PARALLEL = 3;

const click = (x: number, y: number): Action => ({ type: 'click', x, y });
const COUNTERS = { a: [140, 30], b: [230, 30], c: [320, 30] } as const;
const counter = (id: keyof typeof COUNTERS, dx = 0) => click(COUNTERS[id][0] + dx, COUNTERS[id][1]);
const FIELD = click(110, 85);

let fixtures: FixtureServer;
let server: TestServer;
const plans: Plan[] = [];

const open = (page?: string): Action => ({
  type: 'navigate',
  url: `${fixtures.url}/stall.html${page ? `?page=${page}` : ''}`,
});

/** Clicks on counters a, b, c in turn: each changes the screen, none repeats the last. */
const preamble = (count: number): Action[] =>
  (['a', 'b', 'c'] as const).slice(0, count).map((id) => counter(id));

/** Five actions of a loop of `kind` (variant `n`): detection must come within the first three. */
function loopOf(kind: StallKind, n: number): { before: Action[]; loop: Action[] } {
  const five = (make: (k: number) => Action) => Array.from({ length: 5 }, (_, k) => make(k));
  if (kind === 'no_change') {
    const variants = [
      () => five((k) => click(20 + 40 * k + n, 200 + n)),
      () =>
        five((k) => ({ type: 'scroll', x: 200, y: 220, scroll_x: 0, scroll_y: 50 * (k + 1) + n })),
      () => five((k) => ({ type: 'move', x: 30 + 50 * k, y: 250 - n })),
    ];
    return { before: [], loop: variants[n % 3]!() };
  }
  if (kind === 'repeating') {
    return n % 2 === 0
      ? { before: [FIELD], loop: five(() => ({ type: 'type', text: 'x' })) }
      : { before: [], loop: five(() => counter('c', n % 5)) };
  }
  // The toggle and the key t take turns flipping the background: two screens, different actions.
  return {
    before: [],
    loop: [
      click(30 + n, 25),
      { type: 'keypress', keys: ['t'] },
      click(60 - n, 35),
      { type: 'keypress', keys: ['t'] },
      click(40, 30 + (n % 5)),
    ],
  };
}

function loopPlan(kind: StallKind, n: number): Plan {
  const { before, loop } = loopOf(kind, n);
  const lead = [open(), ...preamble(n % 3), ...before];
  return {
    model: `loop-${kind}-${n}`,
    actions: [...lead, ...loop],
    loop: { kind, start: lead.length + 1 },
  };
}

/**
 * A task that does something new every step: counters, typing (after focusing the field),
 * other pages. Counts only go up and each page and word is new, so no screen comes back.
 */
function cleanPlan(n: number): Plan {
  const actions: Action[] = [open()];
  let focused = false;
  for (let j = 0; actions.length < 7; j++) {
    const choice = (n + j) % 3;
    if (choice === 0) {
      actions.push(counter((['a', 'b', 'c'] as const)[(n + j) % 3]!, j));
      focused = false;
    } else if (choice === 1) {
      if (!focused) actions.push(FIELD);
      actions.push({ type: 'type', text: `w${n}-${j} ` });
      focused = true;
    } else {
      actions.push(open(`${n}-${j}`));
      focused = false;
    }
  }
  return { model: `clean-${n}`, actions };
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  for (const kind of ['no_change', 'repeating', 'oscillating'] as const) {
    for (let n = 0; n < LOOPS_OF_EACH_KIND; n++) plans.push(loopPlan(kind, n));
  }
  for (let n = 0; n < CLEAN_TASKS; n++) plans.push(cleanPlan(n));
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-stall-scripts-'));
  const providers = Object.fromEntries(
    plans.map((plan) => {
      const script = join(dir, `${plan.model}.json`);
      const turns = plan.actions.map((action) => ({
        output: [{ type: 'computer_call', action }],
      }));
      writeFileSync(script, JSON.stringify({ delay_ms: 0, turns }));
      return [plan.model, { provider: 'scripted' as const, script }];
    }),
  );
  server = await startTestServer({
    models: { default: plans[0]!.model, providers },
    recording: { enabled: false },
  });
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

type Ran = { plan: Plan; task: Task; events: TaskEvent[] };

/**
 * Runs a plan on a computer of the suite until its task ends or pauses (a paused one is then
 * cancelled). Each plan opens stall.html first, so what an earlier task left is gone.
 */
async function run(plan: Plan, computerId: string): Promise<Ran> {
  const started = await server.request('POST', '/agent/tasks', {
    instruction: 'Use the page',
    model: plan.model,
    computer_id: computerId,
  });
  expect(started.status, started.text).toBe(200);
  const id = started.body.task_id as string;
  const task = await eventually(async () => {
    const current = (await server.request('GET', `/agent/tasks/${id}`)).body as Task;
    return (current.status === 'paused' || current.exit_code !== null) && current;
  }, 30_000);
  const events = server.core.tasks.events('local', id);
  if (task.status === 'paused') {
    await server.request('POST', `/agent/tasks/${id}/cancel`);
    await eventually(
      async () => (await server.request('GET', `/agent/tasks/${id}`)).body.exit_code !== null,
    );
  }
  return { plan, task, events };
}

/** Runs the plans on PARALLEL computers, one task at a time on each. */
async function runAll(list: Plan[]): Promise<Ran[]> {
  const results: Ran[] = [];
  const queue = [...list];
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      const computer = await server.request('POST', '/computers', {
        display: { width: 400, height: 300 },
      });
      expect(computer.status, computer.text).toBe(200);
      for (let plan = queue.shift(); plan; plan = queue.shift()) {
        results.push(await run(plan, computer.body.id as string));
      }
      await server.request('DELETE', `/computers/${computer.body.id}`);
    }),
  );
  return results;
}

describe('stall detection', () => {
  it('catches every scripted loop within three steps of its start, and no clean task', async () => {
    const results = await runAll(plans);

    for (const { plan, task, events } of results.filter((result) => result.plan.loop)) {
      const { kind, start } = plan.loop!;
      const stalled = events.filter((event) => event.type === 'stalled');
      expect(stalled, plan.model).toHaveLength(1);
      expect(stalled[0], plan.model).toMatchObject({ reason: kind, detail: expect.any(String) });
      // Its step is the last one the model took: the loop's third action at the latest.
      expect(stalled[0]!.step, plan.model).toBeGreaterThanOrEqual(start);
      expect(stalled[0]!.step - start + 1, plan.model).toBeLessThanOrEqual(3);
      expect(task, plan.model).toMatchObject({ status: 'paused', paused_reason: 'stalled' });
      expect(
        events.find((event) => event.type === 'paused'),
        plan.model,
      ).toMatchObject({
        reason: 'stalled',
      });
    }

    const clean = results.filter((result) => !result.plan.loop);
    expect(clean).toHaveLength(CLEAN_TASKS);
    for (const { plan, task, events } of clean) {
      expect(
        events.filter((event) => event.type === 'stalled'),
        plan.model,
      ).toEqual([]);
      expect(task, `${plan.model}: ${task.error}`).toMatchObject({
        status: 'completed',
        steps: plan.actions.length + 1,
        paused_reason: null,
      });
      expect(
        events.filter((event) => event.type === 'action_result' && event.status === 'error'),
        plan.model,
      ).toEqual([]);
    }
  }, 120_000);
});
