import {
  agentTurns,
  BROWSER_TASKS,
  startFormPages,
  writeScript,
} from '../../test/helpers/replay-fixtures.js';
import type { Bench } from '../bench.js';
import { REPLAY_MODEL, REPLAY_SCRIPT } from './responses.js';
import { dirname, basename } from 'node:path';

const ROUNDS = 8;

type Turn = { output: Array<{ action?: { type: string } & Record<string, unknown> }> };

/**
 * A task replayed without its model (docs/API.md §18) against the agent run it repeats: the same
 * form task (load the page, click the field, type, click the button), one action per model turn
 * with the scripted model at its default delay (none), each timed from its start to its end as
 * a client sees it, on the same computer. The target is the issue's: a replay at least ten
 * times faster than the run.
 */
export async function benchTaskReplay({ client, report }: Bench): Promise<void> {
  const pages = await startFormPages(BROWSER_TASKS);
  const form = BROWSER_TASKS[0]!;
  const turns = agentTurns(form, pages.url, { turnEach: true }) as Turn[];
  writeScript(dirname(REPLAY_SCRIPT), basename(REPLAY_SCRIPT, '.json'), turns);
  const actions = turns.flatMap((turn) =>
    turn.output.flatMap((item) => (item.action ? [item.action] : [])),
  );
  const { id } = await client.create();
  try {
    const runs: number[] = [];
    const replays: number[] = [];
    const direct: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The same actions sent one by one through the REST API: the floor of a replay.
      const started = performance.now();
      for (const { type, ...body } of actions) {
        await client.request('POST', `/computers/${id}/${type}`, body, 'action');
      }
      direct.push(performance.now() - started);
      const run = await timedTask(client, '/agent/tasks', {
        instruction: `Send "${form.text}" with the form`,
        model: REPLAY_MODEL,
        computer_id: id,
      });
      runs.push(run.ms);
      const replay = await timedTask(client, `/agent/tasks/${run.taskId}/replay`, {
        computer_id: id,
        heal: false,
      });
      replays.push(replay.ms);
    }
    report.timing(
      'task replay (no model) vs its agent run (scripted model, no delay)',
      { api: replays, raw: runs },
      { kind: 'ratio', factor: 0.1 },
      'api = POST /agent/tasks/{id}/replay until the replay ended; raw = the agent run it repeats (4 actions, a model turn each), POST /agent/tasks until it ended',
    );
    report.timing(
      'task replay vs its actions sent through REST',
      { api: replays, raw: direct },
      { kind: 'ratio', factor: 1.2, plusMs: 20 },
      "api = the replay as above (its steps checked: the URL and the element under the point); raw = the same 4 actions as POST /computers/{id}/{action}, one after another; +20 ms for the task's start and end",
    );
  } finally {
    await client.request('DELETE', `/computers/${id}`);
    await pages.close();
  }
}

/** Starts a task (or a replay) and times it until its terminal event; it must complete. */
async function timedTask(
  client: Bench['client'],
  path: string,
  body: Record<string, unknown>,
): Promise<{ ms: number; taskId: string }> {
  const started = performance.now();
  const { task_id } = (await client.request('POST', path, body)) as { task_id: string };
  const end = await client.taskEnd(task_id);
  const ms = performance.now() - started;
  if (end.type !== 'completed') {
    throw new Error(`the bench task ${task_id} ${end.type}: ${JSON.stringify(end)}`);
  }
  return { ms, taskId: task_id };
}
