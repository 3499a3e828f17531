import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench } from '../bench.js';
import { timed } from '../sampling.js';

/** Steps of one benchmarked conversation: an agent task's default max_steps. */
const STEPS = 50;
const CONVERSATIONS = 4;
const TOOL = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'browser',
};

/** The scripted model of the recorded task (the bundle rows): reasoning and a click per step. */
export const RECORDED_MODEL = 'bench-recorded';
/** A long task that clicks around the page every 100 ms: what the grid's thumbnails watch. */
export const GRID_MODEL = 'bench-grid';
export const RECORDED_STEPS = 50;
/** The form task of the replay rows; its script is written by bench/cases/task-replay.ts. */
export const REPLAY_MODEL = 'bench-replay';
export const REPLAY_SCRIPT = join(
  mkdtempSync(join(tmpdir(), 'benchtop-bench-replay-')),
  'form.json',
);

/** The name of the scripted model in the bench's settings. */
export const BENCH_MODEL = 'bench-scripted';

/** The scripted model the benchmark talks to: a click every turn, no delay. */
export function benchModels() {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-bench-'));
  const script = join(dir, 'clicks.json');
  const turns = Array.from({ length: STEPS }, (_, step) => ({
    output: [{ type: 'computer_call', action: { type: 'click', x: 100 + step, y: 150 } }],
  }));
  writeFileSync(script, JSON.stringify({ delay_ms: 0, turns }));
  // A task as a recording shows it: reasoning and a click per step, then the answer.
  const recorded = join(dir, 'recorded.json');
  const recordedTurns = Array.from({ length: RECORDED_STEPS }, (_, step) => ({
    output: [
      { type: 'reasoning', text: `Step ${step + 1}: the next point on the line is further right.` },
      { type: 'computer_call', action: { type: 'click', x: 100 + step * 4, y: 150 } },
    ],
  }));
  recordedTurns.push({
    output: [{ type: 'message', text: 'Clicked along the whole line.' } as never],
  });
  writeFileSync(recorded, JSON.stringify({ delay_ms: 0, turns: recordedTurns }));
  const grid = join(dir, 'grid.json');
  const gridTurns = Array.from({ length: 400 }, (_, step) => ({
    output: [
      { type: 'computer_call', action: { type: 'click', x: 100 + (step % 40) * 20, y: 150 } },
    ],
  }));
  writeFileSync(grid, JSON.stringify({ delay_ms: 100, turns: gridTurns }));
  return {
    default: BENCH_MODEL,
    providers: {
      [BENCH_MODEL]: { provider: 'scripted' as const, script },
      [RECORDED_MODEL]: { provider: 'scripted' as const, script: recorded },
      [GRID_MODEL]: { provider: 'scripted' as const, script: grid },
      [REPLAY_MODEL]: { provider: 'scripted' as const, script: REPLAY_SCRIPT },
    },
  };
}

type Response = { id: string; status: string; output: Array<{ type: string; call_id?: string }> };

/**
 * Benchtop's own cost per /v1/responses call with the scripted provider: a screenshot URL of
 * this server as input (resolved from disk), the response stored, each call chained to the last.
 */
export async function benchResponses({ client, report }: Bench): Promise<void> {
  const { id } = await client.create();
  try {
    const shot = (await client.request('POST', `/computers/${id}/screenshot`, {})) as {
      result: { screenshot_url: string };
    };
    const image = shot.result.screenshot_url;
    const samples: number[] = [];
    for (let conversation = 0; conversation < CONVERSATIONS; conversation++) {
      let previous = (await client.request('POST', '/v1/responses', {
        tools: [TOOL],
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Click along the line' },
              { type: 'input_image', image_url: image },
            ],
          },
        ],
      })) as Response;
      for (let step = 1; step < STEPS; step++) {
        const callId = callOf(previous);
        const body = {
          tools: [TOOL],
          previous_response_id: previous.id,
          input: [
            {
              type: 'computer_call_output',
              call_id: callId,
              output: { type: 'computer_screenshot', image_url: image },
            },
          ],
        };
        samples.push(
          await timed(async () => {
            previous = (await client.request('POST', '/v1/responses', body)) as Response;
          }),
        );
        if (previous.status !== 'completed')
          throw new Error(`response ${previous.id} is ${previous.status}`);
      }
    }
    report.timing(
      '/v1/responses, scripted model, chained, screenshot URL input',
      { api: samples.slice(5) },
      { kind: 'absolute', maxMs: 15 },
      'whole HTTP call; the scripted model reads its script file each call (no delay)',
    );
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}

function callOf(response: Response): string {
  const call = response.output.find((item) => item.type === 'computer_call');
  if (!call?.call_id) throw new Error(`response ${response.id} has no computer_call`);
  return call.call_id;
}
