import { PASSWORD_MASK, type ApprovalTarget } from '../../../shared/approvals.js';
import { describeRanAction, type RanAction } from '../../../shared/describe-action.js';
import type { ComputerEvents } from '../events/computer-events.js';
import type { ActionObserver } from './task-run.js';

/** What a password typed by a person reads as to the model. */
const MASK = PASSWORD_MASK;

/** Lines a summary holds at most: a person may type for an hour. */
const MAX_LINES = 60;

/** Actions that leave no trace a model needs: looks, waits, mere pointer moves. */
const UNSEEN = new Set(['screenshot', 'html', 'wait', 'move', 'list_tabs', 'viewport', 'key_up']);

/**
 * The target of a person's action: the element (or null when there was none), or `unknown` when
 * only the computer's events were watched and nobody looked at the page.
 */
export type SeenTarget = ApprovalTarget | null | 'unknown';

/**
 * What a person did on a computer while a task waited for them, as a few lines for the model:
 * the pages they visited, their clicks with what was clicked, typed text (password fields masked)
 * and keys.
 */
export class PersonLog {
  private readonly lines: string[] = [];
  private left = 0;

  visited(url: string): void {
    const line = `visited ${url}`;
    if (this.lines.at(-1) !== line) this.add(line);
  }

  acted(action: RanAction, target: SeenTarget): void {
    if (UNSEEN.has(action.type)) return;
    // The page it leads to is told by the navigation that follows.
    if (action.type === 'navigate') return;
    this.add(describePersonAction(action, target));
  }

  /** The lines as the model reads them; `lead` says why it is told. */
  summary(lead: string): string {
    if (this.lines.length === 0) {
      return `${lead} A person had the computer but did nothing on it. Continue from this screenshot.`;
    }
    const more = this.left > 0 ? [`- … and ${this.left} more`] : [];
    return [
      `${lead} Meanwhile a person used the computer:`,
      ...this.lines.map((line) => `- ${line}`),
      ...more,
      'Continue from this screenshot.',
    ].join('\n');
  }

  private add(line: string): void {
    if (this.lines.length < MAX_LINES) this.lines.push(line);
    else this.left++;
  }
}

/** One line for a person's action: "clicked at 120, 80 on button “Save”", "typed ••••". */
export function describePersonAction(action: RanAction, target: SeenTarget): string {
  const on = target && target !== 'unknown' ? onTarget(target) : '';
  switch (action.type) {
    case 'type':
    case 'point_and_type':
      return `typed ${typedText(text(action.text), target)}${on}`;
    case 'keypress': {
      const keys = Array.isArray(action.keys) ? (action.keys as string[]) : [];
      const secret = isPassword(target) && keys.some((key) => key.length === 1);
      return `pressed ${secret ? MASK : keys.join('+')}${on}`;
    }
    case 'key_down':
      return `held down ${text(action.key)}`;
    default:
      return `${pastTense(describeRanAction(action))}${on}`;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function typedText(text: string, target: SeenTarget): string {
  if (isPassword(target)) return `${MASK} (a password field)`;
  // Without the element nobody can tell a password field: the text stays with the computer.
  if (target === 'unknown')
    return `${text.length} characters (the field was not seen, so not shown)`;
  return `“${text}”`;
}

const isPassword = (target: SeenTarget): boolean =>
  target !== null && target !== 'unknown' && target.input_type?.toLowerCase() === 'password';

function onTarget(target: ApprovalTarget): string {
  const what = target.role ?? target.tag;
  if (!what && !target.name) return '';
  const name = target.name ? ` “${target.name.slice(0, 80)}”` : '';
  return ` on ${what ?? 'element'}${name}`;
}

/** "click at 5, 6" → "clicked at 5, 6": the summary tells what was done. */
function pastTense(line: string): string {
  return line
    .replace(/^(double |triple |right |middle )?click/, (_, kind: string | undefined) =>
      kind ? `${kind}clicked` : 'clicked',
    )
    .replace(/^scroll/, 'scrolled')
    .replace(/^drag/, 'dragged')
    .replace(/^new tab/, 'opened a new tab')
    .replace(/^switch tab/, 'switched tabs')
    .replace(/^close tab/, 'closed a tab')
    .replace(/^mouse down/, 'pressed the mouse button')
    .replace(/^mouse up/, 'released the mouse button');
}

/**
 * Follows what a person does on a computer until `stop`: each action with its target when
 * `observe` is there, else the computer's action_request events (no targets, so typed text is
 * withheld); and the pages its tabs navigate to. `taskId`'s own actions are not the person's.
 */
export function watchPerson(
  sources: { events: ComputerEvents; observe?: ActionObserver },
  computerId: string,
  taskId: string,
): { stop(): PersonLog } {
  const log = new PersonLog();
  const observe = sources.observe;
  const unobserve = observe?.(computerId, (seen) => {
    if (seen.taskId !== taskId) log.acted(seen.action as RanAction, seen.target);
  });
  const unsubscribe = sources.events.subscribe(computerId, (event) => {
    if (event.type === 'navigation') log.visited(event.url);
    else if (event.type === 'action_request' && !observe) log.acted(event.action, 'unknown');
  });
  return {
    stop() {
      unobserve?.();
      unsubscribe();
      return log;
    },
  };
}
