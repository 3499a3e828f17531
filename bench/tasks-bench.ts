import { SseReader } from '../test/helpers/sse.js';

const STEPS = 30;
const TASKS = 4;
/** #target of actions.html: a click there only logs the event. */
const CLICK = { x: 150, y: 150 };

type Client = {
  request(method: string, path: string, body?: unknown): Promise<unknown>;
  create(): Promise<{ id: string }>;
};
type Timed = (work: () => Promise<unknown>) => Promise<number>;

/**
 * The agent loop's own cost per step: a task with the scripted model (no delay), timed between
 * the screenshot events of consecutive steps as a client sees them, against the same work done
 * directly through the API (a screenshot, then a click).
 */
export async function benchTaskSteps(
  client: Client,
  base: { url: string; key: string; page: string; model: string },
  timed: Timed,
  report: (samples: { api: number[]; raw: number[] }) => void,
): Promise<void> {
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
            await client.request('POST', `/computers/${id}/click`, CLICK);
          }),
        );
      }
    }
    report({ api: steps, raw: direct });
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}

async function stepTimes(
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
