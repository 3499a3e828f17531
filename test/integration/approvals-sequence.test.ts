import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/shared/approvals.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * 2,000 actions over every path that acts (single-action routes, /execute, /batch, exec/sync,
 * debug, agent tasks), each a unique token: tokens starting with g are asked about, with d
 * denied, the rest allowed. A person (this test, on each computer's events stream) approves or
 * denies every asked one at random. Afterwards every gated token that took effect must have an
 * approved approval of that exact action, and no denied one may have taken effect.
 */
const TOTAL = 2000;
const COMPUTERS = 4;
const USER = { x: 140, y: 135 };
const POLICIES = [
  { id: 'gated-text', when: { text_pattern: '^g\\d+ $' }, then: 'ask' },
  { id: 'denied-text', when: { text_pattern: '^d\\d+ $' }, then: 'deny' },
  { id: 'gated-command', when: { command_pattern: 'echo g\\d+ ' }, then: 'ask' },
  { id: 'denied-command', when: { command_pattern: 'echo d\\d+ ' }, then: 'deny' },
];

/** A seeded generator (mulberry32): the same sequence every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Path = 'route' | 'execute' | 'batch' | 'exec' | 'debug' | 'task';
type Step = { token: string; path: Path };

let server: TestServer;
let fixtures: FixtureServer;
const scripts = mkdtempSync(join(tmpdir(), 'benchtop-sequence-'));

beforeAll(async () => {
  [server, fixtures] = await Promise.all([
    startTestServer({ browser: { warm_pool: COMPUTERS } }),
    startFixtureServer(),
  ]);
  expect((await server.request('PUT', '/policies', POLICIES)).status).toBe(200);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});

/** The tokens of one computer's share, each with the path it goes through. */
function plan(next: () => number, first: number, count: number): Step[] {
  const paths: Path[] = ['route', 'execute', 'batch', 'batch', 'exec', 'debug', 'task'];
  return Array.from({ length: count }, (_, index) => {
    const roll = next();
    const kind = roll < 0.3 ? 'g' : roll < 0.4 ? 'd' : 'a';
    return {
      token: `${kind}${first + index}`,
      path: paths[Math.floor(next() * paths.length)]!,
    };
  });
}

describe(`${TOTAL} mixed actions on every path`, () => {
  it(
    'perform no gated action without an approved approval of it',
    // A guard against a hang, not a time to meet: 200 s alone on a slow two-core machine, over
    // 900 s there beside the load suite's cycles.
    { timeout: 1_800_000 },
    async () => {
      const next = random(17);
      const perComputer = TOTAL / COMPUTERS;
      const decisions = new Map<string, 'approve' | 'deny'>();
      const outcomes = await Promise.all(
        Array.from({ length: COMPUTERS }, (_, n) =>
          runComputer(plan(next, n * perComputer, perComputer), random(100 + n), decisions),
        ),
      );
      const approvals = (await server.request<Approval[]>('GET', '/approvals?limit=1000')).body;
      const more = (
        await server.request<Approval[]>('GET', '/approvals?status=approved&limit=1000')
      ).body;
      const approved = new Set(
        [...approvals, ...more]
          .filter((approval) => approval.status === 'approved')
          .map((approval) => tokenOf(approval.action)),
      );
      let gated = 0;
      for (const { steps, performed, notRun } of outcomes) {
        for (const { token } of steps) {
          const took = performed.has(token);
          if (token.startsWith('d')) expect(took, `${token} was denied by policy`).toBe(false);
          if (token.startsWith('g')) {
            gated += 1;
            if (took) expect(approved.has(token), `${token} ran without an approval`).toBe(true);
            const decision = decisions.get(token);
            if (decision === 'deny') expect(took, `${token} was denied`).toBe(false);
            if (decision === 'approve') expect(took, `${token} was approved`).toBe(true);
          }
          // An allowed action after one that failed in the same batch never ran.
          if (token.startsWith('a') && !notRun.has(token)) {
            expect(took, `${token} was allowed`).toBe(true);
          }
        }
      }
      expect(outcomes.flatMap((outcome) => outcome.steps)).toHaveLength(TOTAL);
      expect(gated).toBeGreaterThan(TOTAL / 5);
      expect([...decisions.values()].filter((d) => d === 'approve').length).toBeGreaterThan(100);
    },
  );
});

/** Sends one computer's share and answers its approvals; what took effect, by token. */
async function runComputer(
  steps: Step[],
  next: () => number,
  decisions: Map<string, 'approve' | 'deny'>,
): Promise<{ steps: Step[]; performed: Set<string>; notRun: Set<string> }> {
  const id = (await server.request('POST', '/computers', { recording: false })).body.id as string;
  const call = (path: string, body: unknown) =>
    server.request('POST', `/computers/${id}/${path}`, body);
  await call('navigate', { url: `${fixtures.url}/checkout.html` });
  // The user name field keeps the focus: nothing below clicks elsewhere.
  await call('click', USER);
  const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
  const person = decideAll(events, next, decisions);
  const type = (token: string) => ({ type: 'type', text: `${token} ` });
  const execOutput: string[] = [];
  const notRun = new Set<string>();

  for (let i = 0; i < steps.length;) {
    const step = steps[i]!;
    if (step.path === 'batch') {
      const group = run(steps, i, 'batch');
      const answer = await call('batch', { actions: group.map((s) => type(s.token)) });
      expect(answer.status).toBe(200);
      // The batch stops at its first failure.
      if (answer.body.failed_index !== null) {
        for (const skipped of group.slice(answer.body.failed_index + 1)) notRun.add(skipped.token);
      }
      i += group.length;
      continue;
    }
    if (step.path === 'task') {
      const group = run(steps, i, 'task');
      await runTask(id, group);
      i += group.length;
      continue;
    }
    if (step.path === 'route') {
      expect((await call('type', { text: `${step.token} ` })).status).toBe(200);
    } else if (step.path === 'execute') {
      expect((await call('execute', { action: type(step.token) })).status).toBe(200);
    } else if (step.path === 'exec') {
      const answer = await call('exec/sync', { command: `echo ${step.token} ` });
      if (answer.status === 200) execOutput.push(answer.body.stdout);
      else expect(answer.status).toBe(403);
    } else {
      const answer = await call('debug', { command: `echo ${step.token} ` });
      if (answer.body.status === 'success') execOutput.push(answer.body.result.debug_response);
    }
    i += 1;
  }
  const html = (await call('html', {})).body.result.html_content as string;
  const typed = /<pre id="typed">([^<]*)<\/pre>/.exec(html)![1]!;
  events.close();
  await person.catch(() => {});
  await server.request('DELETE', `/computers/${id}`);
  const performed = new Set([...typed.split(' '), ...execOutput.join(' ').split(/\s+/)]);
  return { steps, performed, notRun };
}

/** The steps from `start` on that go the same path, at most five. */
function run(steps: Step[], start: number, path: Path): Step[] {
  const group: Step[] = [];
  for (let i = start; i < steps.length && group.length < 5 && steps[i]!.path === path; i++) {
    group.push(steps[i]!);
  }
  return group;
}

/** Runs some typing through an agent task on the computer (the scripted model types each token). */
async function runTask(computerId: string, steps: Step[]): Promise<void> {
  const name = `seq-${steps[0]!.token}`;
  const path = join(scripts, `${name}.json`);
  // No click first: a click in the field would put the caret in the middle of what it holds.
  const turns = steps.map((step) => ({
    output: [{ type: 'computer_call', action: { type: 'type', text: `${step.token} ` } }],
  }));
  writeFileSync(path, JSON.stringify({ delay_ms: 0, turns }));
  await server.request('PATCH', '/settings', {
    models: { providers: { [name]: { provider: 'scripted', script: path } } },
  });
  const started = await server.request('POST', '/agent/tasks', {
    instruction: 'type the tokens',
    model: name,
    computer_id: computerId,
    stall_detection: false,
    max_steps: turns.length + 2,
  });
  expect(started.status, started.text).toBe(200);
  await eventually(async () => {
    const task = (await server.request('GET', `/agent/tasks/${started.body.task_id}`)).body;
    return task.exit_code !== null && task;
  }, 60_000);
}

/** The person: decides every approval asked on the computer, approving about two in three. */
async function decideAll(
  events: SseReader,
  next: () => number,
  decisions: Map<string, 'approve' | 'deny'>,
): Promise<void> {
  for (;;) {
    const event = await events.next(120_000);
    if (!event) return;
    const data = event.data as { type: string; approval_id?: string; action?: Approval['action'] };
    if (data.type !== 'approval_required') continue;
    const verb = next() < 0.67 ? 'approve' : 'deny';
    decisions.set(tokenOf(data.action!), verb);
    void server.request('POST', `/approvals/${data.approval_id}/${verb}`, {});
  }
}

function tokenOf(action: Approval['action']): string {
  const text =
    typeof action.text === 'string'
      ? action.text
      : typeof action.command === 'string'
        ? action.command
        : ((action.command as { command?: string } | undefined)?.command ?? '');
  return /[gda]\d+/.exec(text)?.[0] ?? '';
}
