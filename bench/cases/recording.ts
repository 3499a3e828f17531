import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { readZip } from '../../test/helpers/bundle-fixture.js';
import { SseReader } from '../../test/helpers/sse.js';
import { CLICK_AT, type Bench } from '../bench.js';
import { encoderProcesses, ownTicks, TICKS_PER_SECOND } from '../proc.js';
import { progress } from '../report.js';
import { interleave, timed } from '../sampling.js';
import { round } from '../stats.js';
import { RECORDED_MODEL, RECORDED_STEPS } from './responses.js';

const IDLE_COMPUTERS = 10;
const IDLE_SECONDS = 10;
/**
 * From the pool's refill to the start of the measure. A page's renderer works for about ten
 * seconds after it is made (here: ten new pages took 50–90 % of a core over their first 8 s, 2–8 %
 * after), with or without a recording: that is the cost of making computers, not of idle ones.
 */
const SETTLE_SECONDS = 20;

/**
 * The flight recorder's cost (docs/API.md §13): an action on a recorded computer against the
 * same action on one created with `"recording": false`, CPU of idle recorded computers, and a
 * 50-step task's bundle: its size and how soon its offline viewer shows the first step.
 */
export async function benchRecording(bench: Bench): Promise<void> {
  await actionCost(bench);
  await idleCost(bench);
  await bundleOfTask(bench);
}

async function actionCost({ server, client, url, report }: Bench): Promise<void> {
  const on = (await client.request('POST', '/computers', {})) as { id: string };
  const off = (await client.request('POST', '/computers', { recording: false })) as { id: string };
  await server.core.browsers.whenWarm();
  try {
    for (const { id } of [on, off]) {
      await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    }
    const [recorded, unrecorded] = await interleave(20, 150, [
      () => client.timed('POST', `/computers/${on.id}/click`, CLICK_AT, 'action'),
      () => client.timed('POST', `/computers/${off.id}/click`, CLICK_AT, 'action'),
    ]);
    report.timing(
      'click, recording on vs off',
      { api: recorded, raw: unrecorded },
      { kind: 'ratio', factor: 1.05 },
      'api = a recorded computer, raw = the same click on one created with "recording": false',
    );
    const [typedOn, typedOff] = await interleave(10, 100, [
      () => client.timed('POST', `/computers/${on.id}/type`, { text: 'recorded' }, 'action'),
      () => client.timed('POST', `/computers/${off.id}/type`, { text: 'recorded' }, 'action'),
    ]);
    report.timing(
      'type 8 characters, recording on vs off',
      { api: typedOn, raw: typedOff },
      { kind: 'ratio', factor: 1.05 },
      'api = a recorded computer, raw = one created with "recording": false',
    );
  } finally {
    await client.request('DELETE', `/computers/${on.id}`);
    await client.request('DELETE', `/computers/${off.id}`);
  }
}

/**
 * CPU ticks of Benchtop and its Chromium while `count` computers sit on a still page. Idle starts
 * once the warm pool has refilled and the new pages have settled: for about 4 s after ten creates
 * the tree works at one to two cores (the pool's new contexts, the pages' first seconds), which
 * measured here came to 27 % of a core over 10 s against 6 % once settled.
 */
async function idleTicks({ server, client, url }: Bench, recording: boolean): Promise<number> {
  const ids: string[] = [];
  try {
    for (let i = 0; i < IDLE_COMPUTERS; i++) {
      const { id } = (await client.request('POST', '/computers', { recording })) as { id: string };
      await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
      ids.push(id);
    }
    await server.core.browsers.whenWarm();
    await sleep(SETTLE_SECONDS * 1000);
    // Earlier cases' recordings may still be compacted in the background: not this case's cost.
    for (let waited = 0; encoderProcesses().length > 0 && waited < 120; waited++) await sleep(1000);
    const before = ownTicks();
    await sleep(IDLE_SECONDS * 1000);
    return ownTicks() - before;
  } finally {
    for (const id of ids) await client.request('DELETE', `/computers/${id}`);
  }
}

async function idleCost(bench: Bench): Promise<void> {
  const { report } = bench;
  const off = await idleTicks(bench, false);
  const on = await idleTicks(bench, true);
  const percentOfCore = (ticks: number) =>
    round((ticks / TICKS_PER_SECOND / IDLE_SECONDS) * 100, 1);
  const extra = Math.max(0, percentOfCore(on) - percentOfCore(off));
  report.add({
    name: `CPU of ${IDLE_COMPUTERS} idle recorded computers`,
    api_p50_ms: null,
    raw_p50_ms: null,
    unit: '%',
    api_value: percentOfCore(on),
    raw_value: percentOfCore(off),
    ratio: null,
    target: `recorded ≤ 10 % of one core (values: % of a core over ${IDLE_SECONDS} s from ${SETTLE_SECONDS} s after the pool refilled, whole process tree; raw = recording off)`,
    pass: percentOfCore(on) <= 10,
    samples: IDLE_SECONDS * TICKS_PER_SECOND,
    note: `recording adds ${extra} % of a core`,
  });
  progress(
    `idle CPU: recorded ${percentOfCore(on)} %, unrecorded ${percentOfCore(off)} % of a core`,
  );
}

async function bundleOfTask({ server, client, browser, url, report }: Bench): Promise<void> {
  const { id } = (await client.request('POST', '/computers', {})) as { id: string };
  const scratch = mkdtempSync(join(tmpdir(), 'benchtop-bench-bundle-'));
  try {
    await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    const reader = await SseReader.post(`${server.url}/agent/tasks/stream`, server.key, {
      instruction: 'Click along the line',
      computer_id: id,
      model: RECORDED_MODEL,
      max_steps: RECORDED_STEPS + 1,
    });
    let taskId = '';
    for (let event = await reader.next(120_000); event; event = await reader.next(120_000)) {
      const data = event.data as { type: string; task_id: string; error?: string };
      taskId = data.task_id;
      if (data.type === 'failed') throw new Error(`the bench task failed: ${data.error}`);
    }
    await client.request('DELETE', `/computers/${id}`);
    const answer = await fetch(`${server.url}/agent/tasks/${taskId}/bundle`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    if (!answer.ok) throw new Error(`the bundle was refused: ${answer.status}`);
    const zip = Buffer.from(await answer.arrayBuffer());
    const mb = round(zip.length / 1024 / 1024);
    report.add({
      name: `bundle of a ${RECORDED_STEPS}-step scripted task`,
      api_p50_ms: null,
      raw_p50_ms: null,
      api_value: mb,
      raw_value: undefined,
      ratio: null,
      unit: 'MB',
      target: 'bundle ≤ 25 MB',
      pass: mb <= 25,
      samples: 1,
    });
    progress(`bundle: ${mb} MB`);

    for (const [name, entry] of await readZip(zip)) {
      const path = join(scratch, name);
      await mkdir(dirname(path), { recursive: true });
      writeFileSync(path, entry.data);
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const index = pathToFileURL(join(scratch, 'index.html')).href;
    const shown: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        shown.push(
          await timed(async () => {
            await page.goto(index, { waitUntil: 'commit' });
            await page.locator('li.entry-step').first().waitFor({ state: 'visible' });
          }),
        );
      }
    } finally {
      await context.close();
    }
    report.timing(
      `bundle viewer: first step shown (${RECORDED_STEPS} steps)`,
      { api: shown },
      { kind: 'absolute', maxMs: 2000 },
      'file:// index.html of the unzipped bundle, from navigation to the first step visible',
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
