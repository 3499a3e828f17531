import type { Bench } from '../bench.js';
import { desktopPss } from '../proc.js';
import { progress, verdict } from '../report.js';
import { interleave, timed } from '../sampling.js';
import { round } from '../stats.js';

/** Not the spare's shape, so a desktop of this size always starts its own display. */
const UNWARMED = { width: 1280, height: 719 };
const PSS_TARGET_MB = 100;
/** What a desktop nobody uses may cost, in % of one core, recorded (as created by default). */
const IDLE_CPU_TARGET_PCT = 2;

/**
 * Desktop computers (Xvfb + openbox + xterm + nut-js worker). Targets are absolute; the worker's
 * own timings (measured with nut-js alone: grab 3.7 ms, click 1.8 ms) are the floor.
 */
export async function benchDesktop(bench: Bench): Promise<void> {
  await createRows(bench);
  await idleMemory(bench);
  const { client, report } = bench;
  const { id } = (await client.request('POST', '/computers', { kind: 'desktop' })) as {
    id: string;
  };
  const act = (path: string, body: unknown) => () =>
    timed(() => client.request('POST', `/computers/${id}/${path}`, body, 'action'));
  try {
    const [shots] = await interleave(5, 40, [act('screenshot', {})]);
    report.timing(
      'desktop screenshot 1280×720 png',
      { api: shots },
      { kind: 'absolute', maxMs: 35 },
    );
    const [clicks] = await interleave(10, 100, [act('click', { x: 900, y: 600 })]);
    report.timing('desktop click', { api: clicks }, { kind: 'absolute', maxMs: 6 });
    // Typed on the empty desktop area (not the terminal), so nothing runs.
    const [typed] = await interleave(3, 30, [act('type', { text: 'abcdefghij0123456789' })]);
    report.timing('desktop type 20 chars', { api: typed }, { kind: 'absolute', maxMs: 60 });
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}

/** Creates taking the spare desktop (desktop.warm_pool 1), and creates that start their own. */
async function createRows({ server, client, report }: Bench): Promise<void> {
  const createTimes = async (rounds: number, display?: typeof UNWARMED) => {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      await server.core.desktops.whenWarm();
      let id = '';
      const body = { kind: 'desktop', ...(display && { display }) };
      times.push(
        await timed(async () => {
          id = ((await client.request('POST', '/computers', body)) as { id: string }).id;
        }),
      );
      await client.request('DELETE', `/computers/${id}`);
    }
    return times;
  };
  report.timing(
    'desktop create, warm (a spare display taken)',
    { api: await createTimes(8) },
    { kind: 'absolute', maxMs: 200 },
  );
  report.timing(
    'desktop create, cold (display + wm + terminal + worker)',
    { api: await createTimes(4, UNWARMED) },
    { kind: 'absolute', maxMs: 1500 },
  );
}

/**
 * PSS of an idle desktop's processes: X server, worker, window manager, terminal and shell. As
 * created by default, it is recorded (the recorder's grabs load the worker's image encoder); one
 * created with recording off is in the note.
 */
async function idleMemory({ server, client, report }: Bench): Promise<void> {
  const idle = async (body: Record<string, unknown>) => {
    await server.core.desktops.whenWarm();
    const { id } = (await client.request('POST', '/computers', { kind: 'desktop', ...body })) as {
      id: string;
    };
    try {
      return await desktopPss(server, id);
    } finally {
      await client.request('DELETE', `/computers/${id}`);
    }
  };
  const unrecorded = await idle({ recording: false });
  const { mb, parts, cpuPct } = await idle({});
  const pass = mb <= PSS_TARGET_MB;
  report.add({
    name: 'memory of an idle desktop (PSS, all its processes)',
    api_p50_ms: null,
    raw_p50_ms: null,
    ratio: null,
    target: `api ≤ ${PSS_TARGET_MB} MB`,
    pass,
    samples: 9,
    unit: 'MB',
    api_value: round(mb, 1),
    note: `recorded: ${parts}; with recording off ${unrecorded.mb.toFixed(1)} MB: ${unrecorded.parts}`,
  });
  progress(
    `idle desktop: ${mb.toFixed(1)} MB (${parts}); recording off ${unrecorded.mb.toFixed(1)} MB (${unrecorded.parts}) ${verdict(pass)}`,
  );
  const cpuPass = cpuPct <= IDLE_CPU_TARGET_PCT;
  report.add({
    name: 'CPU of an idle desktop (all its processes)',
    api_p50_ms: null,
    raw_p50_ms: null,
    ratio: null,
    target: `api ≤ ${IDLE_CPU_TARGET_PCT} % of one core, recorded (raw = recording off)`,
    pass: cpuPass,
    samples: 1,
    unit: '%',
    api_value: round(cpuPct, 1),
    raw_value: round(unrecorded.cpuPct, 1),
  });
  progress(
    `idle desktop CPU: ${cpuPct.toFixed(1)} % of a core recorded, ${unrecorded.cpuPct.toFixed(1)} % not ${verdict(cpuPass)}`,
  );
}
