import { age, clock, endedBecause } from '../components/format.js';
import { LOOK_TYPES } from '../../../shared/approvals.js';
import type { NavigationEvent, TabEvent } from '../../../shared/events.js';
import type { RecordedEvent } from '../../../shared/recordings.js';
import { describeRanAction } from '../../../shared/describe-action.js';

/**
 * A line of a recording's list, where it happened in the video: an action sent to the computer;
 * a page that changed without one (a navigation, a tab opened or closed by the site or by a CDP
 * client); an action held for a person, with what they decided; and how the computer ended.
 */
export type ActionMark = {
  /** Unique in the list: the action's request id, the approval's id, or the event's place. */
  key: string;
  kind: 'action' | 'page' | 'approval' | 'end';
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

/** Actions whose own line says where the page went: their navigations and tabs are not repeated. */
const MOVES = new Set(['navigate', 'new_tab', 'switch_tab', 'close_tab']);

/** Everything that happened on the computer's screen, in order, placed on the video's time line. */
export function actionMarks(events: RecordedEvent[], startedAt: string): ActionMark[] {
  const start = Date.parse(startedAt);
  const marks: ActionMark[] = [];
  const byKey = new Map<string, ActionMark>();
  /** The navigating actions running (between their request and response). */
  const moving = new Set<string>();
  const add = (mark: ActionMark) => {
    marks.push(mark);
    byKey.set(mark.key, mark);
  };
  for (const [index, event] of events.entries()) {
    const at = Date.parse(event.timestamp);
    const place = { offsetMs: Math.max(0, at - start), byPerson: false, read: false };
    if (event.type === 'action_request') {
      if (MOVES.has(event.action.type)) moving.add(event.request_id);
      add({
        ...place,
        key: event.request_id,
        kind: 'action',
        text: describeRanAction(event.action),
        byPerson: event.source === 'live_view',
        read: LOOK_TYPES.has(event.action.type),
      });
    } else if (event.type === 'action_response') {
      moving.delete(event.request_id);
      const mark = byKey.get(event.request_id);
      if (mark && event.status === 'error') mark.error = event.error_message ?? 'failed';
    } else if (event.type === 'navigation' || event.type === 'tab') {
      const text = moving.size === 0 ? pageChange(event) : undefined;
      if (text) add({ ...place, key: `page-${index}`, kind: 'page', text });
    } else if (event.type === 'approval_required') {
      add({
        ...place,
        key: event.approval_id,
        kind: 'approval',
        text: `held ${describeRanAction(event.action)} for a person: ${event.reason}`,
      });
    } else if (event.type === 'approval_decided') {
      const mark = byKey.get(event.approval_id);
      // The approval's line stands where it was asked.
      const asked = mark && new Date(start + mark.offsetMs).toISOString();
      if (asked) mark.text += ` (${event.status} after ${age(asked, at)})`;
    } else if (event.type === 'status') {
      // Its tabs closed because it ended (just before its status): the end's own line says so.
      const closedByEnd = (mark: ActionMark | undefined) =>
        mark?.kind === 'page' &&
        mark.text.startsWith(TAB_CLOSED) &&
        place.offsetMs - mark.offsetMs <= CLOSED_BY_END_MS;
      while (closedByEnd(marks.at(-1))) marks.pop();
      add({
        ...place,
        key: `end-${index}`,
        kind: 'end',
        text: `ended: ${endedBecause(event.termination_reason, event.ended_by)}`,
      });
    }
  }
  return marks;
}

const TAB_CLOSED = 'tab closed: ';
/** Tabs a computer's end closes are closed within this of its status event. */
const CLOSED_BY_END_MS = 1000;

/** A navigation or tab as a line, or undefined for one nobody needs to read (a blank tab). */
function pageChange(event: NavigationEvent | TabEvent): string | undefined {
  if (event.type === 'navigation') return `page went to ${event.url}`;
  if (event.event === 'opened' && event.url !== 'about:blank') return `tab opened on ${event.url}`;
  if (event.event === 'closed') return `${TAB_CLOSED}${event.url}`;
  return undefined;
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
