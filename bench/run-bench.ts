/**
 * `npm run bench`: Benchtop's HTTP API against the same operations done directly with Playwright on
 * the very same Chromium, in one run. Prints a table and writes bench/results.json.
 *
 * Layout. One process hosts the core, the real server (port 0) and both clients: the raw side must
 * drive the Browser the core drives (core.browsers.launch()), which lives here, and the API side
 * uses fetch (keep-alive) against the server. A client in a child process was tried and measured:
 * it was not faster but 0.1–0.7 ms slower per request (cross-process wake-ups on 2 cores), so
 * in-process is kept; it is the simpler and, if anything, the more favourable setup for the API.
 * The "http floor" row shows the fixed cost of one authenticated request on each run.
 *
 * Samples are interleaved (API, raw, raw, API, …) after warm-up, so machine noise hits both sides.
 * Exit code: 0 when the run completed, whatever the targets say; 1 on any error.
 *
 * Each case is a file of bench/cases; bench/report.ts prints the table and writes results.json.
 */
import { existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../test/helpers/fixture-server.js';
import { startTestServer, type TestServer } from '../test/helpers/test-server.js';
import { builtAppPaths } from '../src/main/start-benchtop.js';
import type { Bench } from './bench.js';
import { benchActions } from './cases/actions.js';
import { benchApprovals } from './cases/approvals.js';
import { benchCdp } from './cases/cdp.js';
import { benchCreateDelete } from './cases/create-delete.js';
import { benchDensity } from './cases/density.js';
import { benchDesktop } from './cases/desktop.js';
import { benchExec } from './cases/exec.js';
import { benchFrameLatency } from './cases/frame-latency.js';
import { benchFullCycle } from './cases/full-cycle.js';
import { benchTaskReplay } from './cases/task-replay.js';
import { benchLiveView } from './cases/live-view.js';
import { benchMcp } from './cases/mcp.js';
import { benchMemory } from './cases/memory.js';
import { benchModels, benchResponses } from './cases/responses.js';
import { benchRecording } from './cases/recording.js';
import { benchRemoteBackends } from './cases/remote-backends.js';
import { benchScreencast } from './cases/screencast.js';
import { benchTaskScale } from './cases/task-scale.js';
import { benchTaskSteps } from './cases/task-steps.js';
import { BenchClient } from './client.js';
import { chromiumProcesses, noiseMeter } from './proc.js';
import { Report } from './report.js';
import { round } from './stats.js';

/**
 * warm_pool 2 is the shipped default (the test helper sets 1). The limits are raised so they never
 * shape what is measured: 50 idle computers at once for the density case (this machine's backend
 * takes 20 by default), and bursts of ~1000
 * requests/s in the action loops (the per-key rate limit defaults to 100/s, burst 200).
 */
const SETTINGS = {
  browser: {
    warm_pool: 2,
    backends: [{ name: 'local', type: 'local' as const, max_computers: 60 }],
  },
  desktop: { warm_pool: 1 },
  limits: { browsers_per_org: 60, requests_per_second: 100_000, burst: 100_000 },
  models: benchModels(),
};
const RESULTS_PATH = join(import.meta.dirname, 'results.json');

let server: TestServer | undefined;
let fixtures: FixtureServer | undefined;

// tsx turns source maps on; the built app (out/) runs without them. Playwright captures a stack at
// every call, and mapping each frame back to TypeScript cost an API click, whose stack is deeper
// than the raw side's, 0.65 ms in a CPU profile of 1,600 clicks: a cost of the bench, not the app.
process.setSourceMapsEnabled(false);

async function main(): Promise<void> {
  const started = performance.now();
  const noise = noiseMeter();
  fixtures = await startFixtureServer();
  // The built desktop worker where there is one: what ships, not the sources run through tsx.
  const built = join(import.meta.dirname, '..', 'out', 'main');
  const paths = existsSync(join(built, 'desktop-worker.js')) ? builtAppPaths(built) : undefined;
  server = await startTestServer(SETTINGS, { paths });
  const client = new BenchClient(server.url, server.key);
  const report = new Report();
  const browser = await server.core.browsers.launch();
  await server.core.browsers.whenWarm();
  const chromiumVersion = browser.version();
  const url = `${fixtures.url}/actions.html`;
  const bench: Bench = { server, fixtures, client, browser, url, report };
  console.error(`Chromium ${chromiumVersion}, Node ${process.version}, ${cpus().length} cores`);

  const cases: [string, (bench: Bench) => Promise<void>][] = [
    ['create-delete', benchCreateDelete],
    ['full-cycle', benchFullCycle],
    ['actions', benchActions],
    ['exec', benchExec],
    ['responses', benchResponses],
    ['task-steps', benchTaskSteps],
    ['task-scale', benchTaskScale],
    ['task-replay', benchTaskReplay],
    ['desktop', benchDesktop],
    ['screencast', benchScreencast],
    ['frame-latency', benchFrameLatency],
    ['memory', benchMemory],
    ['density', benchDensity],
    ['recording', benchRecording],
    ['approvals', benchApprovals],
    ['mcp', benchMcp],
    ['cdp', benchCdp],
    ['remote-backends', benchRemoteBackends],
    // Last: the UI's own Chromium must not be running while memory is measured.
    ['live-view', benchLiveView],
  ];
  // BENCH_CASES=actions,recording runs only those (while working on one; the figures are the full run's).
  const only = process.env.BENCH_CASES?.split(',');
  for (const [name, run] of cases) if (!only || only.includes(name)) await run(bench);

  const seconds = (performance.now() - started) / 1000;
  const machineNoise = noise();
  console.log();
  report.printTable();
  console.log();
  console.log('api = HTTP to Benchtop (server on port 0 in this process, fetch with keep-alive);');
  console.log(
    'raw = the same with Playwright directly, on the same Chromium (core.browsers.launch()).',
  );
  console.log(
    'POST /computers is the warm path: core.browsers.whenWarm() is awaited before every create (warm_pool 2).',
  );
  const busy = machineNoise.others_cpu_pct + machineNoise.steal_pct;
  console.log(
    `Other processes used ${machineNoise.others_cpu_pct}% of the ${cpus().length} cores during the run ` +
      `(hypervisor steal ${machineNoise.steal_pct}%)` +
      (busy > 10 ? ': the machine was not quiet, the numbers are noisy; rerun when it is.' : '.'),
  );
  const failed = report.failed;
  console.log(
    failed.length === 0
      ? `All targets met (${seconds.toFixed(0)} s).`
      : `Targets missed: ${failed.join('; ')} (${seconds.toFixed(0)} s).`,
  );

  if (only) {
    console.log(`Only ${only.join(', ')}: ${RESULTS_PATH} left as it was.`);
    return;
  }
  report.writeResults(RESULTS_PATH, {
    date: new Date().toISOString(),
    node: process.version,
    chromium_version: chromiumVersion,
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? null,
      memory_gb: round(totalmem() / 2 ** 30, 1),
    },
    settings: SETTINGS,
    method:
      'api: fetch (keep-alive) in the bench process to the server on port 0 in the same process, timing ' +
      'request, reading, parsing and checking the answer. raw: Playwright on the same Browser (core.browsers.launch()). Samples interleaved ' +
      'with rotating order after warm-up; p50/p90 by linear interpolation. POST /computers on the warm path ' +
      '(core.browsers.whenWarm() before every create). Memory: PSS from /proc/<pid>/smaps_rollup summed over ' +
      'the Chromium processes below the bench process (density: over the bench process, which is the ' +
      'server, and every process below it).',
    duration_s: round(seconds, 1),
    machine_noise: machineNoise,
  });
  console.log(`Wrote ${RESULTS_PATH}`);
}

async function shutdown(): Promise<void> {
  await server?.close();
  await fixtures?.close();
  for (let i = 0; i < 20 && chromiumProcesses().length > 0; i++) await sleep(100);
  const left = chromiumProcesses();
  if (left.length > 0) throw new Error(`Chromium processes still running: ${left.join(', ')}`);
}

// Stopped from outside (Ctrl-C, a job killed): end the server first, or a spare desktop's Xvfb
// (a process group of its own) would outlive the bench. The signal comes more than once (to the
// process group, then relayed by npm and tsx): a repeat must not kill the process mid-shutdown.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`bench: ${signal}, ending the server`);
    void shutdown()
      .catch((error: unknown) => console.error('cleanup failed:', error))
      .finally(() => process.exit(1));
  });
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  // Once stopped, the cases fail as the server goes away: the signal was the reason.
  if (!stopping) console.error('bench failed:', error);
  exitCode = 1;
}
// Once stopped, the signal's handler ends the server and the process.
if (!stopping) {
  try {
    await shutdown();
  } catch (error) {
    console.error('cleanup failed:', error);
    exitCode = 1;
  }
  process.exit(exitCode);
}
