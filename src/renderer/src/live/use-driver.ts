import { useCallback, useRef, useState } from 'react';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { ApiError } from '../api/client.js';
import { usePolling } from '../hooks/use-polling.js';
import { drivingTask } from '../tasks/live-tasks.js';

export type Driver =
  | { who: 'nobody' }
  | { who: 'agent'; task: Task }
  | { who: 'paused'; task: Task }
  | { who: 'person'; task?: Task };

/**
 * Who is driving the computer: an agent task running on it, or the person at the live view.
 * The person's first action while a task runs pauses the task (takeover); hand back resumes it.
 */
export function useDriver(computerId: string) {
  const api = useApi();
  const tasks = usePolling(() => api.get<Task[]>('/agent/tasks'), 1500);
  const [personDriving, setPersonDriving] = useState(false);
  const current = drivingTask(tasks.data ?? [], computerId);
  const currentRef = useRef(current);
  currentRef.current = current;
  /** The task this person paused: the polled list may not show it paused yet. */
  const pausedByUs = useRef<string>(undefined);
  const { reload } = tasks;

  /** Called before each of the person's actions; pauses a task that is driving. */
  const takeOver = useCallback(async () => {
    setPersonDriving(true);
    const task = currentRef.current;
    if (task?.status !== 'running' || pausedByUs.current === task.task_id) return;
    pausedByUs.current = task.task_id;
    try {
      await api.post(`/agent/tasks/${task.task_id}/pause`);
    } catch (error) {
      // It finished or was paused in the meantime: the person drives either way.
      if (!(error instanceof ApiError && error.status === 400)) throw error;
    }
    await reload();
  }, [api, reload]);

  const handBack = useCallback(async () => {
    const task = currentRef.current;
    if (task?.status === 'paused') await api.post(`/agent/tasks/${task.task_id}/resume`);
    pausedByUs.current = undefined;
    setPersonDriving(false);
    await reload();
  }, [api, reload]);

  let driver: Driver = { who: 'nobody' };
  if (personDriving) driver = { who: 'person', task: current };
  else if (current?.status === 'running') driver = { who: 'agent', task: current };
  else if (current) driver = { who: 'paused', task: current };
  return { driver, takeOver, handBack, error: tasks.error };
}
