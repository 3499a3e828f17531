import { type Bench } from '../bench.js';
import { settledTreePss } from '../proc.js';
import { progress, verdict } from '../report.js';
import { percentile, round } from '../stats.js';

/** Idle browser computers held at once (docs/API.md density target: 50 on one machine). */
const COMPUTERS = 50;
/** Creates are timed with this many running (and the pool warm), as computers 41–50 are made. */
const RUNNING = 40;
/** Extra create + delete rounds at RUNNING, so the create row has enough samples. */
const ROUNDS = 10;
const MAX_TOTAL_MB = 3.5 * 1024;

/**
 * Many idle computers at once: 50 browser computers, all created (recorded, as settings default),
 * a screenshot of each, then the PSS of the whole process tree (the server, which is this
 * process, and every Chromium process below it). Creates are timed while 40 are running.
 */
export async function benchDensity({ server, client, report }: Bench): Promise<void> {
  const ids: string[] = [];
  const creates: number[] = [];
  // Computers that outlive the case's few minutes on a loaded machine: no idle timeout.
  const body = { kind: 'browser', inactivity_timeout_seconds: 3600 };
  const create = async () => {
    await server.core.browsers.whenWarm();
    const started = performance.now();
    const { id } = (await client.request('POST', '/computers', body)) as { id: string };
    const ms = performance.now() - started;
    ids.push(id);
    return ms;
  };
  try {
    while (ids.length < RUNNING) await create();
    for (let round = 0; round < ROUNDS; round++) {
      creates.push(await create());
      await server.core.browsers.whenWarm();
      await client.request('DELETE', `/computers/${ids.pop()!}`);
    }
    while (ids.length < COMPUTERS) creates.push(await create());
    let shots = 0;
    for (const id of ids) {
      const answer = (await client.request(
        'POST',
        `/computers/${id}/screenshot`,
        {},
        'action',
      )) as {
        result?: { width?: number };
      };
      if (answer.result?.width === 1280) shots++;
    }
    const pss = await settledTreePss(server);
    const pass = shots === COMPUTERS && pss.mb <= MAX_TOTAL_MB;
    report.add({
      name: `${COMPUTERS} idle browser computers: total PSS`,
      api_p50_ms: null,
      raw_p50_ms: null,
      ratio: null,
      target: `all ${COMPUTERS} screenshot; server + Chromium ≤ ${MAX_TOTAL_MB} MB`,
      pass,
      samples: COMPUTERS,
      unit: 'MB',
      api_value: round(pss.mb, 1),
      note:
        `${shots}/${COMPUTERS} screenshots answered; ${pss.processes} processes; server process ` +
        `${pss.serverMb.toFixed(0)} MB; ${(pss.mb / COMPUTERS).toFixed(1)} MB per computer ` +
        `(warm pool included)`,
    });
    progress(
      `density: ${pss.mb.toFixed(0)} MB for ${COMPUTERS}, ${shots} screenshots ${verdict(pass)}`,
    );
    report.timing(
      `POST /computers with ${RUNNING}+ running (warm path)`,
      { api: creates },
      { kind: 'absolute', maxMs: 50 },
      `creates ${RUNNING + 1}–${COMPUTERS} and ${ROUNDS} create + delete rounds at ${RUNNING}; p50 ${round(percentile(creates, 0.5))} ms`,
    );
  } finally {
    for (const id of ids) await client.request('DELETE', `/computers/${id}`);
  }
}
