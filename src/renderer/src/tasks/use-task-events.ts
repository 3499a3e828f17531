import { useEffect, useState } from 'react';
import type { TaskEvent } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/error-text.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'max_steps']);
const RECONNECT_MS = 1000;

/**
 * The task's events: the server replays what happened so far, then follows live and closes after
 * the terminal event. A stream cut short (Benchtop restarting) is opened again and replayed whole.
 */
export function useTaskEvents(taskId: string): { events: TaskEvent[]; error?: string } {
  const api = useApi();
  const [events, setEvents] = useState<TaskEvent[]>([]);
  const [error, setError] = useState<string>();

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const run = async () => {
      let finished = false;
      while (!finished && !signal.aborted) {
        const received: TaskEvent[] = [];
        setEvents(received);
        const params = { id: taskId };
        for await (const { data } of api.events('tasks.events', { params, signal })) {
          received.push(data);
          finished ||= TERMINAL.has(data.type);
          setEvents([...received]);
        }
        if (!finished) await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    };
    run().catch((failure: unknown) => {
      if (!signal.aborted) setError(errorText(failure));
    });
    return () => controller.abort();
  }, [api, taskId]);

  return { events, error };
}
