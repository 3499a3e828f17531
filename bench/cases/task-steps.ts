import { SseReader } from '../../test/helpers/sse.js';
import { CLICK_AT, type Bench } from '../bench.js';
import { timed } from '../sampling.js';
import { BENCH_MODEL } from './responses.js';

const STEPS = 30;
const TASKS = 4;

/**
 * The agent loop's own cost per step: a task with the scripted model (no delay), timed between
 * the screenshot events of consecutive steps as a client sees them, against the same work done
 * directly through the API (a screenshot, then a click).
 */
export async function benchTaskSteps({ server, client, url, report }: Bench): Promise<void> {
  const base = { url: server.url, key: server.key, page: url, model: BENCH_MODEL };
  const { id } = await client.create();
  try {
    await client.request('POST', `/computers/${id}/navigate`, { url: base.page });
    const steps: number[] = [];
    const direct: number[] = [];
    for (let round = 0; round < TASKS; round++) {
      steps.push(...(await stepTimes(base, id)));
      for (let i = 0; i < STEPS; i++) {
        direct.push(
          await timed(async () => {
            await client.request('POST', `/computers/${id}/screenshot`, {});
            await client.request('POST', `/computers/${id}/click`, CLICK_AT);
          }),
        );
      }
    }
    report.timing(
      'agent task step (scripted model): screenshot → model → click',
      { api: steps, raw: direct },
      { kind: 'ratio', factor: 1.2 },
      'api = time between consecutive screenshot events at an SSE client; raw = POST screenshot + POST click through the API',
    );
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}

export async function stepTimes(
  base: { url: string; key: string; model: string },
  computer: string,
): Promise<number[]> {
  const reader = await SseReader.post(`${base.url}/agent/tasks/stream`, base.key, {
    instruction: 'Click along the line',
    computer_id: computer,
    model: base.model,
    max_steps: STEPS,
  });
  const seen: number[] = [];
  for (;;) {
    const event = await reader.next(60_000);
    if (!event) break;
    const data = event.data as { type: string; error?: string };
    if (data.type === 'screenshot') seen.push(performance.now());
    if (data.type === 'failed') throw new Error(`the bench task failed: ${data.error}`);
  }
  // The first step also waits for the task to start; the rest are whole steps.
  return seen.slice(2).map((at, index) => at - seen[index + 1]!);
}
