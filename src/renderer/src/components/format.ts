import type { TerminationReason } from '../../../shared/computers.js';

/** "1:05", "12:00", "1:02:03" for a number of seconds (negative counts as zero). */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

/** "4 s", "3 min", "2 h", "5 d" ago-style age. */
export function age(fromIso: string, now: number): string {
  const seconds = Math.max(0, (now - Date.parse(fromIso)) / 1000);
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

export function secondsUntil(iso: string | null, now: number): number | undefined {
  return iso === null ? undefined : (Date.parse(iso) - now) / 1000;
}

export function localTime(iso: string): string {
  return new Date(iso).toLocaleString();
}

const ENDINGS: Record<TerminationReason, string> = {
  deleted: 'it was ended on request (the API, this window or its task)',
  idle_timeout: 'nothing used it for its idle timeout',
  max_lifetime: 'it reached its maximum lifetime',
  crashed: 'its browser or desktop crashed',
  shutdown: 'Benchtop shut down',
  backend_lost: 'its browser backend stopped answering',
};

/**
 * Why a computer ended, in words, with the API's name for it: "… (backend_lost)"; one ended on
 * request names who asked when the server says ("it was ended by its task task_… (deleted)").
 */
export function endedBecause(reason: TerminationReason, endedBy?: string): string {
  const why = reason === 'deleted' && endedBy ? `it was ended by ${endedBy}` : ENDINGS[reason];
  return `${why} (${reason})`;
}
