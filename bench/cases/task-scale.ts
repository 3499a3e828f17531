import { cpus } from 'node:os';
import type { Bench } from '../bench.js';
import { BENCH_MODEL } from './responses.js';
import { stepTimes } from './task-steps.js';

const TASKS = 10;
const ROUNDS = 2;

/**
 * Ten scripted tasks at once, each on its own computer, against one task alone: the time between
 * consecutive steps as an SSE client sees them. Ten tasks share the machine's cores, so the
 * target allows for that: with C cores, ten steps can at best run C at a time, and a step of ten
 * in parallel may take 1.2 × (10 / C) times a lone one (1.2× on a machine of ten cores or more).
 */
export async function benchTaskScale({ server, client, url, report }: Bench): Promise<void> {
  const base = { url: server.url, key: server.key, model: BENCH_MODEL };
  const ids: string[] = [];
  try {
    for (let i = 0; i < TASKS; i++) {
      await server.core.browsers.whenWarm();
      ids.push(
        ((await client.request('POST', '/computers', { kind: 'browser' })) as { id: string }).id,
      );
    }
    for (const id of ids)
      await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    const alone: number[] = [];
    const parallel: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(...(await stepTimes(base, ids[0]!)));
      const each = await Promise.all(ids.map((id) => stepTimes(base, id)));
      parallel.push(...each.flat());
    }
    const cores = cpus().length;
    const factor = 1.2 * (TASKS / Math.min(TASKS, cores));
    report.timing(
      `agent task step, ${TASKS} tasks at once (scripted model)`,
      { api: parallel, raw: alone },
      { kind: 'ratio', factor },
      `api = a step of one of ${TASKS} tasks running at once, raw = a step of one task alone; ` +
        `target 1.2 × ${TASKS} / min(${TASKS}, ${cores} cores)`,
    );
  } finally {
    for (const id of ids) await client.request('DELETE', `/computers/${id}`);
  }
}
