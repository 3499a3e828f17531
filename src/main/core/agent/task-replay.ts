import { setTimeout as sleep } from 'node:timers/promises';
import type { CreateResponseBody, OutputAction } from '../../../shared/responses.js';
import type { StepCheck } from '../../../shared/task-scripts.js';
import type { Task, TaskEvent } from '../../../shared/tasks.js';
import { describeModelAction } from '../../../shared/describe-action.js';
import type { SessionSpec } from '../computers/computer-session.js';
import { invalidRequest } from '../errors.js';
import { divergence } from './step-check.js';

/** A performed action of a task, as a replay or a script repeats it. */
export type RecordedStep = { action: OutputAction; check: StepCheck | undefined };

const ENDINGS = new Set(['terminate', 'answer', 'done']);

/**
 * The actions a task performed, in order: each action event whose action_result succeeded (a
 * healed replay's events hold the healed actions, so its own steps replay with no model).
 */
export function recordedSteps(events: readonly TaskEvent[]): RecordedStep[] {
  const steps: RecordedStep[] = [];
  let pending: RecordedStep | undefined;
  for (const event of events) {
    if (event.type === 'action' && !ENDINGS.has(event.action.type)) {
      pending = { action: event.action, check: event.check };
    } else if (event.type === 'action_result') {
      if (pending && event.status === 'success') steps.push(pending);
      pending = undefined;
    }
  }
  return steps;
}

/** The steps of a finished task; a task still going (or without actions) cannot be replayed. */
export function replayableSteps(task: Task, events: readonly TaskEvent[]): RecordedStep[] {
  if (task.exit_code === null) {
    throw invalidRequest(
      `task ${task.task_id} is ${task.status}; only a finished task can be replayed or exported`,
    );
  }
  return recordedSteps(events);
}

/** What a replay needs of the task it runs in. */
export type ReplayHost = {
  /** Waits while paused; throws once the task was ended from outside. */
  gate(): Promise<void>;
  /** Starts step `step` (counted and saved). */
  begin(step: number): void;
  /** `pixels`: with a browser's region hash too (a desktop's is always read). */
  look(action: OutputAction, pixels: boolean): Promise<StepCheck>;
  /** Emits the action with its check, performs it, emits its result; its error or null. */
  perform(step: number, action: OutputAction, check: StepCheck): Promise<string | null>;
  /** One model call on the screen as it is now; the action it gives, or why there is none. */
  repair(step: number, recorded: RecordedStep, reason: string): Promise<Repair>;
  healed(
    step: number,
    event: {
      before: OutputAction;
      after: OutputAction;
      reason: string;
      screenshot_url: string | null;
    },
  ): void;
};

export type Repair = { action: OutputAction; screenshot_url: string | null } | { error: string };

export type ReplayOutcome =
  { status: 'completed'; result: string | null } | { status: 'failed'; error: string };

/**
 * Repeats the recorded steps: each checked first; a step whose screen moved is repaired by one
 * model call when `heal`, else the replay fails naming it.
 */
export async function replaySteps(
  steps: readonly RecordedStep[],
  heal: boolean,
  host: ReplayHost,
  result: string | null,
): Promise<ReplayOutcome> {
  for (const [index, recorded] of steps.entries()) {
    await host.gate();
    const step = index + 1;
    host.begin(step);
    let action = recorded.action;
    const settled = await settle(host, recorded);
    const { moved } = settled;
    let { check } = settled;
    const name = `step ${step} (${describeModelAction(action)})`;
    if (moved) {
      if (!heal) return { status: 'failed', error: `${name} no longer fits the screen: ${moved}` };
      const repair = await host.repair(step, recorded, moved);
      if ('error' in repair) {
        return { status: 'failed', error: `${name} could not be healed: ${repair.error}` };
      }
      action = repair.action;
      host.healed(step, {
        before: recorded.action,
        after: action,
        reason: moved,
        screenshot_url: repair.screenshot_url,
      });
      check = await host.look(action, true);
    } else if (!check.region_hash && recorded.check?.region_hash) {
      // The same element under the same point: the run's pixels stand for the script's check.
      check = { ...check, region_hash: recorded.check.region_hash };
    }
    const error = await host.perform(step, action, check);
    if (error) return { status: 'failed', error: `${name} failed: ${error}` };
  }
  return { status: 'completed', result };
}

/** How long a step's screen may take to come where the run was (a page still loading). */
export const SETTLE_MS = 2000;
const SETTLE_POLL_MS = 100;

/**
 * The screen before a recorded step, and how it differs from the run's: looked at again for a
 * moment while it differs, since the previous action's effect (a navigation, a repaint) may
 * still be on its way.
 */
async function settle(
  host: ReplayHost,
  recorded: RecordedStep,
): Promise<{ check: StepCheck; moved: string | null }> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const check = await host.look(recorded.action, false);
    const moved = divergence(recorded.check, check);
    if (!moved || Date.now() >= deadline) return { check, moved };
    await sleep(SETTLE_POLL_MS);
    await host.gate();
  }
}

const HEAL_INSTRUCTIONS =
  'You repair one step of a recorded computer task whose screen has changed since it was ' +
  'recorded. Look at the screenshot and answer with exactly one computer action that does what ' +
  'the recorded step did. Do not do anything else.';

/** The one model call that repairs a step: the recorded step, what moved, and the screen now. */
export function repairRequest(repair: {
  model: string;
  spec: Pick<SessionSpec, 'display' | 'kind'>;
  instruction: string;
  step: RecordedStep;
  reason: string;
  image: string;
}): CreateResponseBody {
  const { display, kind } = repair.spec;
  const { action, check } = repair.step;
  const target = check?.target?.name ? ` on "${check.target.name}"` : '';
  const text =
    `The task was: ${repair.instruction}\n` +
    `The recorded step: ${JSON.stringify(action)}${target}.\n` +
    `It no longer fits: ${repair.reason}.\n` +
    'Answer with the one action that does the same on this screen.';
  return {
    model: repair.model,
    instructions: HEAL_INSTRUCTIONS,
    tools: [
      {
        type: 'computer_use',
        display_width: display.width,
        display_height: display.height,
        environment: kind === 'browser' ? 'browser' : 'linux',
      },
    ],
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text },
          { type: 'input_image', image_url: repair.image },
        ],
      },
    ],
  } as CreateResponseBody;
}
