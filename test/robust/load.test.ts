import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile, round } from '../../bench/stats.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { commandOf, descendants } from '../helpers/processes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Load: 20 browser computers doing mixed actions from concurrent clients for a while, with zero
 * errors; then create/delete cycles after which contexts, processes, displays, file handles and
 * memory are back to where they started. Figures go to test-results/robust/load.json.
 */

const COMPUTERS = 20;
const LOAD_SECONDS = Number(process.env.BENCHTOP_LOAD_SECONDS ?? 60);
const CYCLES = 300;
const DESKTOP_CYCLES = 5;
const RESULTS = join(import.meta.dirname, '..', '..', 'test-results', 'robust');

let server: TestServer;
let fixtures: FixtureServer;
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  server = await startTestServer({ limits: { browsers_per_org: COMPUTERS + 2 } });
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await server.close();
  await fixtures.close();
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'load.json'), `${JSON.stringify(figures, null, 2)}\n`);
});

type Step = { name: string; path: string; body: unknown };
const STEPS: Step[] = [
  { name: 'click', path: 'click', body: { x: 150, y: 150 } },
  { name: 'type', path: 'type', body: { text: 'load' } },
  { name: 'scroll', path: 'scroll', body: { x: 200, y: 400, dx: 0, dy: 120 } },
  { name: 'keypress', path: 'hotkey', body: { keys: ['Control', 'a'] } },
  { name: 'screenshot', path: 'screenshot', body: {} },
  { name: 'html', path: 'html', body: {} },
  {
    name: 'batch',
    path: 'batch',
    body: {
      actions: [
        { type: 'click', x: 150, y: 150 },
        { type: 'wait', ms: 0 },
        { type: 'click', x: 160, y: 150 },
      ],
    },
  },
];

/** Latency figures to a tenth of a millisecond. */
const quantile = (values: number[], p: number) => round(percentile(values, p), 1);

/** One client driving one computer until the deadline; its latencies and errors. */
async function client(id: string, until: number, seed: number) {
  const latencies: Array<[string, number]> = [];
  const errors: string[] = [];
  let i = seed;
  while (Date.now() < until) {
    const step = STEPS[i++ % STEPS.length]!;
    const navigate = i % 50 === 0;
    const started = performance.now();
    const answer = navigate
      ? await server.request('POST', `/computers/${id}/navigate`, {
          url: `${fixtures.url}/actions.html`,
        })
      : await server.request('POST', `/computers/${id}/${step.path}`, step.body);
    latencies.push([navigate ? 'navigate' : step.name, performance.now() - started]);
    const failed =
      answer.status !== 200 ||
      (answer.body?.status !== undefined && answer.body.status !== 'success') ||
      answer.body?.success === false;
    if (failed) errors.push(`${step.name} on ${id}: ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return { latencies, errors };
}

function chromiumPids(): number[] {
  return descendants(process.pid).filter((pid) => /chrom/i.test(commandOf(pid)));
}
function displayPids(): number[] {
  return descendants(process.pid).filter((pid) =>
    /Xvfb|openbox|xterm|desktop-worker/.test(commandOf(pid)),
  );
}
const openFiles = () => readdirSync('/proc/self/fd').length;
function pssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(
        /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0,
      );
    } catch {
      // Gone meanwhile.
    }
  }
  return Math.round(kb / 1024);
}
async function snapshot() {
  await server.core.browsers.whenWarm();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const browser = await server.core.browsers.launch();
  return {
    contexts: browser.contexts().length,
    chromium_processes: chromiumPids().length,
    display_processes: displayPids().length,
    open_files: openFiles(),
    server_rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
    chromium_pss_mb: pssMb(chromiumPids()),
  };
}

describe('load', () => {
  it(
    `${COMPUTERS} browser computers, mixed actions from concurrent clients for ${LOAD_SECONDS} s, zero errors`,
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < COMPUTERS; i++) {
        const created = await server.request('POST', '/computers', {});
        expect(created.status, created.text).toBe(200);
        ids.push(created.body.id as string);
        await server.request('POST', `/computers/${created.body.id}/navigate`, {
          url: `${fixtures.url}/actions.html`,
        });
      }
      const until = Date.now() + LOAD_SECONDS * 1000;
      const results = await Promise.all(ids.map((id, index) => client(id, until, index)));
      const errors = results.flatMap((result) => result.errors);
      const all = results.flatMap((result) => result.latencies);
      const byType: Record<string, { n: number; p50_ms: number; p99_ms: number }> = {};
      for (const name of new Set(all.map(([type]) => type))) {
        const values = all.filter(([type]) => type === name).map(([, ms]) => ms);
        byType[name] = {
          n: values.length,
          p50_ms: quantile(values, 0.5),
          p99_ms: quantile(values, 0.99),
        };
      }
      const values = all.map(([, ms]) => ms);
      figures.load = {
        computers: COMPUTERS,
        seconds: LOAD_SECONDS,
        actions: all.length,
        actions_per_second: Math.round(all.length / LOAD_SECONDS),
        errors: errors.length,
        p50_ms: quantile(values, 0.5),
        p99_ms: quantile(values, 0.99),
        by_type: byType,
      };
      console.log(`load: ${JSON.stringify(figures.load)}`);
      expect(errors.slice(0, 5)).toEqual([]);
      expect(all.length).toBeGreaterThan(COMPUTERS * 10);
      for (const id of ids)
        expect((await server.request('DELETE', `/computers/${id}`)).status).toBe(204);
    },
    (LOAD_SECONDS + 120) * 1000,
  );

  // Its timeout guards against a hang, not a time to meet: 592 s on a slow two-core machine,
  // beside the approvals sequence.
  it(`${CYCLES} browser and ${DESKTOP_CYCLES} desktop create/delete cycles leave nothing behind`, async () => {
    const before = await snapshot();
    for (let i = 0; i < CYCLES; i++) {
      const created = await server.request('POST', '/computers', {});
      expect(created.status, created.text).toBe(200);
      if (i % 10 === 0)
        await server.request('POST', `/computers/${created.body.id}/navigate`, {
          url: `${fixtures.url}/actions.html`,
        });
      expect((await server.request('DELETE', `/computers/${created.body.id}`)).status).toBe(204);
    }
    for (let i = 0; i < DESKTOP_CYCLES; i++) {
      const created = await server.request('POST', '/computers', { kind: 'desktop' });
      expect(created.status, created.text).toBe(200);
      expect((await server.request('DELETE', `/computers/${created.body.id}`)).status).toBe(204);
    }
    const after = await snapshot();
    figures.cycles = { browser_cycles: CYCLES, desktop_cycles: DESKTOP_CYCLES, before, after };
    console.log(`cycles: ${JSON.stringify(figures.cycles)}`);
    expect(after.contexts).toBe(before.contexts);
    expect(after.display_processes).toBe(0);
    expect(after.chromium_processes).toBeLessThanOrEqual(before.chromium_processes + 2);
    expect(after.open_files).toBeLessThanOrEqual(before.open_files + 20);
    expect(after.chromium_pss_mb).toBeLessThanOrEqual(before.chromium_pss_mb + 150);
    expect(after.server_rss_mb).toBeLessThanOrEqual(before.server_rss_mb + 150);
  }, 1_200_000);
});
