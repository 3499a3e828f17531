import { randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, serveProcess, tree, type BenchtopProcess } from '../helpers/benchtop-process.js';
import { processClock, processesOnDisplay } from '../helpers/desktop.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { visitLoginPage } from '../helpers/page-state.js';
import { commandOf, isAlive } from '../helpers/processes.js';
import { SseReader } from '../helpers/sse.js';
import { eventually } from '../helpers/test-server.js';

/**
 * SIGTERM of `benchtop serve` in the middle of everything: a persistent browser computer signed
 * in on a page, a persistent desktop with a file in its workspace, a running agent task and two
 * running shell commands. The process must exit 0 having saved both environments, ended the task
 * as shutdown, and left no process behind: no Chromium, Xvfb, openbox, xterm, desktop worker or
 * command. Figures are printed as `[shutdown] …` lines for docs/ROBUSTNESS.md.
 */

let fixtures: FixtureServer;
const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-shutdown-'));
const configDir = mkdtempSync(join(tmpdir(), 'benchtop-shutdown-config-'));
const started: BenchtopProcess[] = [];
let seen: number[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  const script = join(configDir, 'slow.json');
  // A model that takes far longer than the test to answer: the task is mid-step at SIGTERM.
  writeFileSync(
    script,
    JSON.stringify({
      delay_ms: 600_000,
      turns: [{ output: [{ type: 'computer_call', action: { type: 'click', x: 5, y: 5 } }] }],
    }),
  );
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({
      models: { default: 'slow', providers: { slow: { provider: 'scripted', script } } },
    }),
  );
});
afterAll(async () => {
  for (const server of started) server.child.kill('SIGKILL');
  await killAll(seen);
  await fixtures.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
});

/** Every live process (whoever its parent is now) whose command line contains text. */
function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid && isAlive(pid) && commandOf(pid).includes(text));
}

const KINDS: Array<[string, RegExp]> = [
  ['Chromium', /chrom/i],
  ['Xvfb', /^Xvfb /],
  ['openbox', /^openbox /],
  ['xterm', /^xterm /],
  ['desktop worker', /desktop-worker/],
  ['sleep', /^sleep /],
];

function kindOf(pid: number): string {
  const command = commandOf(pid);
  return KINDS.find(([, pattern]) => pattern.test(command))?.[0] ?? 'other';
}

function visit(server: BenchtopProcess, key: string, id: string, query: string) {
  return visitLoginPage(
    (method, path, body) => server.request(method, path, body, key),
    fixtures.url,
    id,
    query,
  );
}

describe('SIGTERM of benchtop serve', () => {
  it('exits 0, saves environments, ends the task as shutdown and leaves no process', async () => {
    // With a spare desktop waiting (and taken by the restored desktop after the restart).
    const env = {
      BENCHTOP_CONFIG: join(configDir, 'config.json'),
      BENCHTOP_DESKTOP_WARM_POOL: '1',
    };
    const first = await serveProcess(dataDir, env);
    started.push(first);
    const key = first.firstKey!;
    const call = (method: string, path: string, body?: unknown) =>
      first.request(method, path, body, key);

    const browser = (await call('POST', '/computers', { persistent: true })).body.id as string;
    expect(await visit(first, key, browser, '?login&mark=dora')).toMatchObject({
      cookie: 'dora',
      local: 'dora',
      idb: 'dora',
    });
    const desktopAnswer = await call('POST', '/computers', { kind: 'desktop', persistent: true });
    expect(desktopAnswer.status, desktopAnswer.text).toBe(200);
    const desktop = desktopAnswer.body.id as string;
    const noted = await call('POST', `/computers/${desktop}/exec/sync`, {
      command: 'echo kept > note.txt && echo $DISPLAY',
    });
    const display = (noted.body.stdout as string).trim();
    expect(display).toMatch(/^:\d+$/);

    const task = (await call('POST', '/agent/tasks', { instruction: 'x' })).body;
    expect(task.status).toBe('running');
    const following = await SseReader.open(`${first.url}/agent/tasks/${task.task_id}/events`, key);
    while (((await following.next(15_000))?.data as { type: string }).type !== 'screenshot');
    following.close();

    // Two commands that would run for a quarter of an hour, found later by their unique length.
    const markers = [`1000.${randomInt(1e6)}`, `1001.${randomInt(1e6)}`];
    const streams = [desktop, browser].map((id, index) => {
      const controller = new AbortController();
      const response = fetch(`${first.url}/computers/${id}/exec`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ command: `sleep ${markers[index]}` }),
        signal: controller.signal,
      }).then((answer) => answer.text().catch(() => ''));
      return { controller, response: response.catch(() => '') };
    });
    await eventually(() => markers.every((marker) => processesWith(`sleep ${marker}`).length > 0));

    seen = tree(first.child.pid!).slice(1);
    const counts = new Map<string, number>();
    for (const pid of seen) counts.set(kindOf(pid), (counts.get(kindOf(pid)) ?? 0) + 1);
    for (const [kind] of KINDS) expect(counts.get(kind) ?? 0, `${kind} runs`).toBeGreaterThan(0);
    const onDisplay = await processesOnDisplay(display);

    const signalledAt = Date.now();
    const signalled = await processClock();
    first.child.kill('SIGTERM');
    expect(await first.exited()).toBe(0);
    const exitMs = Date.now() - signalledAt;
    const aliveAtExit = seen.filter(isAlive).map((pid) => `${pid} ${commandOf(pid).slice(0, 60)}`);
    await eventually(() => seen.every((pid) => !isAlive(pid)), 5000).catch(() => {});
    expect(seen.filter(isAlive).map((pid) => `${kindOf(pid)}: ${commandOf(pid)}`)).toEqual([]);
    // Nothing escaped the tree either (reparented to init): by command line and by display.
    for (const marker of markers) expect(processesWith(`sleep ${marker}`)).toEqual([]);
    expect(await processesOnDisplay(display, { startedBefore: signalled })).toEqual([]);
    expect(onDisplay.length).toBeGreaterThan(0);
    for (const stream of streams) {
      stream.controller.abort();
      await stream.response;
    }

    const second = await serveProcess(dataDir, env);
    started.push(second);
    const again = (method: string, path: string, body?: unknown) =>
      second.request(method, path, body, key);
    const environments = (await again('GET', '/computers?type=persistent')).body as Array<{
      id: string;
      kind: string;
    }>;
    expect(environments.map(({ id, kind }) => `${kind} ${id}`).sort()).toEqual(
      [`browser ${browser}`, `desktop ${desktop}`].sort(),
    );
    const restored = (await again('POST', '/computers', { environment_id: browser })).body;
    expect(await visit(second, key, restored.id as string, '')).toMatchObject({
      cookie: 'dora',
      local: 'dora',
      idb: 'dora',
    });
    const restoredDesktop = await again('POST', '/computers', {
      kind: 'desktop',
      environment_id: desktop,
    });
    expect(restoredDesktop.status, restoredDesktop.text).toBe(200);
    const note = await again('POST', `/computers/${restoredDesktop.body.id}/exec/sync`, {
      command: 'cat note.txt',
    });
    expect(note.body.stdout).toBe('kept\n');

    const ended = (await again('GET', `/agent/tasks/${task.task_id}`)).body;
    expect(ended).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(ended.error).toMatch(/^shutdown/);
    const events = await SseReader.open(`${second.url}/agent/tasks/${task.task_id}/events`, key);
    expect(((await events.all()).at(-1)!.data as { type: string }).type).toBe('failed');

    const secondTree = tree(second.child.pid!).slice(1);
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
    await eventually(() => secondTree.every((pid) => !isAlive(pid)), 5000).catch(() => {});
    expect(secondTree.filter(isAlive).map(commandOf)).toEqual([]);

    const census = KINDS.map(([kind]) => `${counts.get(kind)} ${kind}`).join(', ');
    console.log(
      `[shutdown] SIGTERM with a signed-in persistent browser, a persistent desktop, a running ` +
        `task and 2 running commands: exit 0 after ${exitMs} ms; of ${seen.length} descendant ` +
        `processes (${census}, ${counts.get('other') ?? 0} other) ${aliveAtExit.length} were ` +
        `still alive at the instant of exit and 0 after; both environments restored (cookie, ` +
        `localStorage, IndexedDB; the workspace file); the task read failed "${ended.error}"; the ` +
        `restarted server also exited 0 leaving none of its ${secondTree.length} processes`,
    );
  }, 120_000);
});
