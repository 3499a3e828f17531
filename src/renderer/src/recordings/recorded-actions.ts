import { clock } from '../components/format.js';
import type { RecordedEvent } from '../../../shared/recordings.js';
import { describeRanAction } from '../../../shared/describe-action.js';

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
        text: describeRanAction(event.action),
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

/** Less than any two actions apart, more than a seconds↔milliseconds round trip loses. */
const SEEK_ROUNDING_MS = 0.5;

/**
 * The index of the last offset at or before the position (offsets in ascending order): what is on
 * screen at that moment. -1 before the first one or without a position.
 */
export function playingIndex(offsetsMs: readonly number[], positionMs: number | undefined): number {
  if (positionMs === undefined) return -1;
  let index = -1;
  for (const [n, offset] of offsetsMs.entries()) {
    // A seek to an action lands on offset / 1000 s; read back × 1000 it can be a hair below the
    // offset (1.001 s × 1000 = 1000.9999…), which would mark the action before it.
    if (offset > positionMs + SEEK_ROUNDING_MS) break;
    index = n;
  }
  return index;
}

/** A moment of the video to a tenth of a second: "0:07.4", "12:03.0". */
export function videoTime(offsetMs: number): string {
  const ms = Math.max(0, Math.floor(offsetMs));
  return `${clock(Math.floor(ms / 1000))}.${Math.floor((ms % 1000) / 100)}`;
}
