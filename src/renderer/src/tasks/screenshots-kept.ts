import type { Task } from '../../../shared/tasks.js';

/** How long a computer's screenshots outlive it. */
const GRACE_MS = 10 * 60_000;

/**
 * Whether a task's screenshot URLs can still be fetched. They live while the computer runs and
 * ten minutes after, never across a restart (which also changes the port when it is picked
 * freely). Asking for images that are gone would only fill the console with failed loads.
 */
export function screenshotsKept(
  task: Task,
  computerRunning: boolean,
  screenshotUrl: string | undefined,
  baseUrl: string,
  now: number,
): boolean {
  if (task.status === 'running' || task.status === 'paused' || computerRunning) return true;
  if (now - Date.parse(task.updated_at) > GRACE_MS) return false;
  return !screenshotUrl || portOf(screenshotUrl) === portOf(baseUrl);
}

function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  } catch {
    return '';
  }
}
