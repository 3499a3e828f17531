import type { ActionRequestEvent } from '../../../../shared/events.js';
import type { OutputAction } from '../../../../shared/responses.js';
import type { Task, TaskEvent } from '../../../../shared/tasks.js';
import { groupTaskSteps, type TaskStep } from '../../../../shared/task-steps.js';
import { describeTaskEvent } from '../../../../shared/describe-task-event.js';
import { describeModelAction, describeRanAction } from '../../../../shared/describe-action.js';

/** A mark drawn on a screenshot, in its own pixels: a point, or a line from x, y to end_x, end_y. */
export type Mark = { x: number; y: number; end_x?: number; end_y?: number };

/** A step's screenshot: its file in the bundle (and size, when known), or why there is none. */
export type Shot =
  { file: string; width: number | null; height: number | null } | { missing: string };

/** One line of a step: what happened (`type` is the task event's), and for an action its result. */
export type Line = {
  type: TaskEvent['type'];
  label: string;
  text: string;
  result?: { ok: boolean; text: string | null };
};

type Timed = {
  /** When it happened (ISO-8601). */
  at: string;
  /** Seconds into the bundle's video, or null without a video. */
  offset: number | null;
};

/** The task's events from one screenshot to the next (step 0: before the first screenshot). */
export type StepEntry = Timed & {
  kind: 'step';
  step: number;
  shot: Shot | null;
  marks: Mark[];
  /** What the step did that has no point on the screen: typing, keys, scrolling by, waiting. */
  captions: string[];
  lines: Line[];
  /** The step's model request and answer in the bundle, when they were recorded. */
  model: { request: string | null; response: string | null };
};

/** Something a person did on the computer from the live view while the task ran. */
export type PersonEntry = Timed & { kind: 'person'; text: string };

/** The viewer's timeline, in time order; each kind has its own look (approvals will be one). */
export type TimelineEntry = StepEntry | PersonEntry;

export type ModelFiles = { request?: string; response?: string };

export type TimelineSources = {
  events: TaskEvent[];
  /** The recording's action_request events a person sent from the live view during the task. */
  personInputs: ActionRequestEvent[];
  /** Each screenshot URL of the task's events, as the bundle holds it. */
  shots: ReadonlyMap<string, Shot>;
  /** The recorded model files of each step. */
  model: ReadonlyMap<number, ModelFiles>;
  /** When the bundle's video starts (epoch ms); undefined without a video. */
  videoStartedAt: number | undefined;
};

/**
 * The task's events cut into steps where it looked at the screen (as the window's task page does),
 * with the person's inputs placed among them at their times.
 */
export function buildTimeline(sources: TimelineSources): TimelineEntry[] {
  const offset = (at: string): number | null =>
    sources.videoStartedAt === undefined
      ? null
      : Math.max(0, Math.round(Date.parse(at) - sources.videoStartedAt) / 1000);
  const steps = groupTaskSteps(sources.events).map((group) => toStep(group, sources, offset));
  const people: PersonEntry[] = sources.personInputs.map((event) => ({
    kind: 'person',
    at: event.timestamp,
    offset: offset(event.timestamp),
    text: describeRanAction(event.action),
  }));
  return mergeByTime(steps, people);
}

function toStep(
  group: TaskStep,
  sources: TimelineSources,
  offset: (at: string) => number | null,
): StepEntry {
  const at = group.events[0]!.timestamp;
  const { actions } = group;
  const files = sources.model.get(group.step);
  return {
    kind: 'step',
    step: group.step,
    at,
    offset: offset(at),
    shot: group.screenshot === undefined ? null : (sources.shots.get(group.screenshot) ?? null),
    marks: actions.flatMap(markOf),
    captions: actions.filter((action) => action.x === undefined).map(describeModelAction),
    lines: linesOf(group.events),
    model: { request: files?.request ?? null, response: files?.response ?? null },
  };
}

function markOf(action: OutputAction): Mark[] {
  if (action.x === undefined || action.y === undefined) return [];
  if (action.type === 'drag' && action.end_x !== undefined && action.end_y !== undefined) {
    return [{ x: action.x, y: action.y, end_x: action.end_x, end_y: action.end_y }];
  }
  return [{ x: action.x, y: action.y }];
}

/**
 * The step's events as lines; each action result joins the action it answers, also across what
 * happened while the action was held for a person (asked, paused, decided, resumed).
 */
function linesOf(events: TaskEvent[]): Line[] {
  const lines: Line[] = [];
  let waiting: Line | undefined;
  for (const event of events) {
    if (event.type === 'action_result' && waiting) {
      waiting.result = { ok: event.status === 'success', text: event.error_message };
      waiting = undefined;
      continue;
    }
    const line = lineOf(event);
    if (!line) continue;
    lines.push(line);
    if (event.type === 'action') waiting = line;
  }
  return lines;
}

function lineOf(event: TaskEvent): Line | undefined {
  const line = describeTaskEvent(event, 'bundle');
  return line ? { type: event.type, label: line.kind, text: line.text } : undefined;
}

/** Both lists are in time order; the result is too (a step before a person's input at the same ms). */
function mergeByTime(steps: StepEntry[], people: PersonEntry[]): TimelineEntry[] {
  const merged: TimelineEntry[] = [];
  let p = 0;
  for (const step of steps) {
    while (p < people.length && Date.parse(people[p]!.at) < Date.parse(step.at)) {
      merged.push(people[p++]!);
    }
    merged.push(step);
  }
  return merged.concat(people.slice(p));
}

/** The task's title line for the viewer: the instruction's first line, shortened. */
export function titleOf(task: Task): string {
  const first = task.instruction.split('\n')[0]!.trim();
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}
