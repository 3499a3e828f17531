import { clock } from '../components/format.js';
import type { RecordedEvent } from '../../../shared/recordings.js';

/** An action of a recording, where it happened in the video. */
export type ActionMark = {
  requestId: string;
  /** Milliseconds from the start of the video (the recording's started_at). */
  offsetMs: number;
  text: string;
  /** Sent by a person from the window's live view (not by an agent or an API caller). */
  byPerson: boolean;
  /** Only read the computer (a screenshot, the tab list, the HTML): nothing on screen changed. */
  read: boolean;
  /** The error the action answered with, when it failed. */
  error?: string;
};

type RecordedAction = { type: string } & Record<string, unknown>;

const READS = new Set(['screenshot', 'list_tabs', 'html']);

/** Every action the computer ran, in order, placed on the video's time line. */
export function actionMarks(events: RecordedEvent[], startedAt: string): ActionMark[] {
  const start = Date.parse(startedAt);
  const marks: ActionMark[] = [];
  const byRequest = new Map<string, ActionMark>();
  for (const event of events) {
    if (event.type === 'action_request') {
      const mark: ActionMark = {
        requestId: event.request_id,
        offsetMs: Math.max(0, Date.parse(event.timestamp) - start),
        text: describeRecordedAction(event.action),
        byPerson: event.source === 'live_view',
        read: READS.has(event.action.type),
      };
      marks.push(mark);
      byRequest.set(event.request_id, mark);
    } else if (event.type === 'action_response' && event.status === 'error') {
      const mark = byRequest.get(event.request_id);
      if (mark) mark.error = event.error_message ?? 'failed';
    }
  }
  return marks;
}

/**
 * The index of the last offset at or before the position (offsets in ascending order): what is on
 * screen at that moment. -1 before the first one or without a position.
 */
export function playingIndex(offsetsMs: readonly number[], positionMs: number | undefined): number {
  if (positionMs === undefined) return -1;
  let index = -1;
  for (const [n, offset] of offsetsMs.entries()) {
    if (offset > positionMs) break;
    index = n;
  }
  return index;
}

/** A moment of the video to a tenth of a second: "0:07.4", "12:03.0". */
export function videoTime(offsetMs: number): string {
  const ms = Math.max(0, Math.floor(offsetMs));
  return `${clock(Math.floor(ms / 1000))}.${Math.floor((ms % 1000) / 100)}`;
}

/**
 * One line for an action as the server ran it (aliases resolved, points as `at`):
 * "click at 150, 130", "right click at 5, 6", "type “hi”", "keypress Control+A".
 */
export function describeRecordedAction(action: RecordedAction): string {
  const point = coords(action.at);
  const at = point ? ` at ${point}` : '';
  switch (action.type) {
    case 'click': {
      const count = action.count === 2 ? 'double ' : action.count === 3 ? 'triple ' : '';
      const button = str(action.button) === 'left' ? '' : `${str(action.button)} `.trimStart();
      return `${count}${button}click${at}`;
    }
    case 'type':
    case 'point_and_type':
      return `type “${str(action.text)}”${at}`;
    case 'keypress':
      return `keypress ${Array.isArray(action.keys) ? action.keys.join('+') : ''}`;
    case 'key_down':
    case 'key_up':
      return `${action.type.replace('_', ' ')} ${str(action.key)}`;
    case 'scroll':
      return `scroll${at} by ${num(action.dx)}, ${num(action.dy)}`;
    case 'drag': {
      const path = Array.isArray(action.path) ? action.path : [];
      return `drag from ${coords(path[0]) ?? '?'} to ${coords(path.at(-1)) ?? '?'}`;
    }
    case 'navigate':
      return `go to ${str(action.url)}`;
    case 'new_tab':
      return `new tab ${str(action.url)}`.trim();
    case 'wait':
      return `wait ${num(action.ms)} ms`;
    case 'finish':
      return [str(action.signal) || 'finish', str(action.result)].filter(Boolean).join(': ');
    default:
      return `${action.type.replaceAll('_', ' ')}${at}`;
  }
}

/** "150, 130" for a point, undefined for anything else. */
function coords(point: unknown): string | undefined {
  if (typeof point !== 'object' || point === null) return undefined;
  const { x, y } = point as { x?: unknown; y?: unknown };
  return typeof x === 'number' && typeof y === 'number' ? `${x}, ${y}` : undefined;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
