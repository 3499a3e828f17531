import type { TaskEvent } from '../../src/shared/tasks.js';

/**
 * A replay's events as its task stores them: step 1 navigates (no look at the screen), step 2 was
 * healed on the screenshot at `shot` (its click moved down), step 3 types and the task completes.
 */
export function healedReplayEvents(shot: string): TaskEvent[] {
  const base = { task_id: 'task_1', timestamp: '2026-11-22T10:00:00.000Z' };
  const click = { type: 'click', x: 5, y: 6 } as const;
  return [
    { ...base, step: 0, type: 'started', computer_id: 'comp_1', max_steps: 5 },
    { ...base, step: 1, type: 'action', action: { type: 'navigate', url: 'http://p/' } },
    { ...base, step: 1, type: 'action_result', status: 'success', error_message: null },
    { ...base, step: 2, type: 'screenshot', screenshot_url: shot },
    {
      ...base,
      step: 2,
      type: 'healed',
      before: click,
      after: { ...click, y: 60 },
      reason: 'moved',
      screenshot_url: shot,
    },
    { ...base, step: 2, type: 'action', action: { ...click, y: 60 } },
    { ...base, step: 3, type: 'action', action: { type: 'type', text: 'hi' } },
    { ...base, step: 3, type: 'completed', result: null },
  ];
}
