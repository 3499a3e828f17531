import type { Task } from '../../../shared/tasks.js';

/** A task that still holds its computer: running, or paused and waiting to be resumed. */
export function isLive(task: Pick<Task, 'status'>): boolean {
  return task.status === 'running' || task.status === 'paused';
}

const newestFirst = (a: Task, b: Task) => Date.parse(b.created_at) - Date.parse(a.created_at);

/**
 * The live task driving each computer, by computer id. Should two live tasks name the same
 * computer, the newest wins: it is the one whose actions a person sees land now.
 */
export function drivingTasks(tasks: readonly Task[]): Map<string, Task> {
  const drivers = new Map<string, Task>();
  for (const task of [...tasks].filter(isLive).sort(newestFirst)) {
    if (!drivers.has(task.computer_id)) drivers.set(task.computer_id, task);
  }
  return drivers;
}

export function drivingTask(tasks: readonly Task[], computerId: string): Task | undefined {
  return drivingTasks(tasks).get(computerId);
}

/** Tasks a person may still act on, then the ones that are over; each part newest first. */
export function liveFirst(tasks: readonly Task[]): { live: Task[]; finished: Task[] } {
  const sorted = [...tasks].sort(newestFirst);
  return {
    live: sorted.filter(isLive),
    finished: sorted.filter((task) => !isLive(task)),
  };
}
