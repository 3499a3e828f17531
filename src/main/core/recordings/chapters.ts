import type { ActionRequestEvent } from '../../../shared/events.js';

const MAX_TEXT = 40;

/** A video chapter's title for an action: what it did, where, in a few words. */
export function chapterTitle(event: Pick<ActionRequestEvent, 'action' | 'source'>): string {
  const action = event.action as Record<string, unknown> & { type: string };
  const parts = [action.type];
  const at = action.at as { x: number; y: number } | undefined;
  if (at && typeof at.x === 'number') parts.push(`(${Math.round(at.x)}, ${Math.round(at.y)})`);
  for (const key of ['url', 'text', 'keys', 'key'] as const) {
    const value = action[key];
    if (value === undefined) continue;
    const text =
      typeof value === 'string'
        ? value
        : Array.isArray(value)
          ? value.join('+')
          : JSON.stringify(value);
    parts.push(JSON.stringify(text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text));
    break;
  }
  if (event.source === 'live_view') parts.push('— a person, from the live view');
  return parts.join(' ');
}
