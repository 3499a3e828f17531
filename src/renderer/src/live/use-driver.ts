import { useMutation, useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { ApiError } from '../../../shared/client/api-client.js';
import { LIVE_STATUSES, queryKeys, taskListQuery } from '../api/queries.js';
import { drivingTask } from '../tasks/live-tasks.js';

export type Driver =
  /** Not known yet: the first answer about the computer's tasks has not come. */
  | { who: 'unknown' }
  | { who: 'nobody' }
  | { who: 'agent'; task: Task }
  | { who: 'paused'; task: Task }
  | { who: 'person'; task?: Task };

type Control = { taskId: string; verb: 'pause' | 'resume' };

/** How often the live view asks which task drives its computer. */
const DRIVER_POLL_MS = 1500;

/**
 * Who is driving the computer: an agent task running on it, or the person at the live view.
 * The person's first action while a task runs pauses the task (takeover); hand back resumes it.
 */
export function useDriver(computerId: string) {
  const api = useApi();
  // The server answers the computer's newest live task; picking it from the answer again keeps
  // the banner right whatever the list holds.
  const driving = useQuery({
    ...taskListQuery(api, { computer_id: computerId, status: LIVE_STATUSES, limit: 1 }),
    refetchInterval: DRIVER_POLL_MS,
    select: (tasks: Task[]) => drivingTask(tasks, computerId),
  });
  const control = useMutation({
    mutationFn: ({ taskId, verb }: Control) =>
      api.call(`tasks.${verb}`, { params: { id: taskId } }),
    meta: { invalidates: [queryKeys.tasks, queryKeys.attention] },
  });
  const { mutateAsync } = control;
  const [personDriving, setPersonDriving] = useState(false);
  const current = driving.data;
  const currentRef = useRef(current);
  currentRef.current = current;
  /**
   * The task this person paused (the polled answer may not show it paused yet), and whether an
   * answer has shown it paused since.
   */
  const pausedByUs = useRef<{ taskId: string; seenPaused: boolean }>(undefined);

  /** The person stops driving; the task, if any, is not touched. */
  const release = useCallback(() => {
    pausedByUs.current = undefined;
    setPersonDriving(false);
  }, []);

  // A task that runs again without this person handing it back (its held action decided, its
  // budget raised, resumed on its page) drives again: the person no longer does.
  useEffect(() => {
    const ours = pausedByUs.current;
    if (current?.status === 'paused' && ours?.taskId === current.task_id) ours.seenPaused = true;
    if (personDriving && current?.status === 'running') {
      if (ours?.taskId !== current.task_id || ours.seenPaused) release();
    }
  }, [current, personDriving, release]);

  /** Called before each of the person's actions; pauses a task that is driving. */
  const takeOver = useCallback(async () => {
    setPersonDriving(true);
    const task = currentRef.current;
    if (task?.status !== 'running' || pausedByUs.current?.taskId === task.task_id) return;
    pausedByUs.current = { taskId: task.task_id, seenPaused: false };
    try {
      await mutateAsync({ taskId: task.task_id, verb: 'pause' });
    } catch (error) {
      // It finished or was paused in the meantime: the person drives either way.
      if (!(error instanceof ApiError && error.status === 400)) throw error;
    }
  }, [mutateAsync]);

  /** Resumes the task, and the person stops driving. */
  const handBack = useCallback(async () => {
    const task = currentRef.current;
    if (task?.status === 'paused') await mutateAsync({ taskId: task.task_id, verb: 'resume' });
    release();
  }, [mutateAsync, release]);

  let driver: Driver = driving.isPending ? { who: 'unknown' } : { who: 'nobody' };
  if (personDriving) driver = { who: 'person', task: current };
  else if (current?.status === 'running') driver = { who: 'agent', task: current };
  else if (current) driver = { who: 'paused', task: current };
  return { driver, takeOver, handBack, release };
}
