import { describe, expect, it } from 'vitest';
import { unstartedTaskFields, type Task, type TaskEvent } from '../../src/shared/tasks.js';
import { describeModelAction as describeAction } from '../../src/shared/describe-action.js';
import { screenshotsKept } from '../../src/renderer/src/tasks/screenshots-kept.js';
import { groupSteps } from '../../src/renderer/src/tasks/task-timeline.js';
import { healedReplayEvents } from '../helpers/task-events.js';

const at = '2026-11-22T10:00:00.000Z';
const base = { task_id: 'task_1', timestamp: at };

describe('the task timeline', () => {
  it('opens a step at each screenshot, in the order things happened', () => {
    const events: TaskEvent[] = [
      { ...base, step: 0, type: 'started', computer_id: 'comp_1', max_steps: 5 },
      { ...base, step: 1, type: 'screenshot', screenshot_url: 'http://h/1.png' },
      { ...base, step: 1, type: 'reasoning', text: 'thinking' },
      { ...base, step: 1, type: 'action', action: { type: 'click', x: 5, y: 6 } },
      { ...base, step: 1, type: 'paused' },
      { ...base, step: 1, type: 'user_message', text: 'hurry' },
      { ...base, step: 1, type: 'resumed' },
      { ...base, step: 2, type: 'screenshot', screenshot_url: 'http://h/2.png' },
      { ...base, step: 2, type: 'action', action: { type: 'type', text: 'hi' } },
      { ...base, step: 2, type: 'completed', result: 'ok' },
    ];
    const steps = groupSteps(events);
    expect(steps.map((step) => [step.screenshot, step.events.map((event) => event.type)])).toEqual([
      [undefined, ['started']],
      [
        'http://h/1.png',
        ['screenshot', 'reasoning', 'action', 'paused', 'user_message', 'resumed'],
      ],
      ['http://h/2.png', ['screenshot', 'action', 'completed']],
    ]);
    expect(steps[1]!.actions).toEqual([{ type: 'click', x: 5, y: 6 }]);
  });

  it('gives each step of a replay its own entry, a healed one with the screen the model saw', () => {
    const events = healedReplayEvents('http://h/2.png');
    const steps = groupSteps(events);
    expect(steps.map((step) => [step.step, step.screenshot, step.events.length])).toEqual([
      [0, undefined, 1],
      [1, undefined, 2],
      [2, 'http://h/2.png', 3],
      [3, undefined, 2],
    ]);
  });

  it('says what each action did in a line', () => {
    expect(describeAction({ type: 'click', x: 5, y: 6 })).toBe('click at 5, 6');
    expect(describeAction({ type: 'double_click', x: 5, y: 6 })).toBe('double click at 5, 6');
    expect(describeAction({ type: 'type', text: 'hi' })).toBe('type “hi”');
    expect(describeAction({ type: 'keypress', keys: ['ctrl', 'a'] })).toBe('keypress ctrl+a');
    expect(describeAction({ type: 'drag', x: 1, y: 2, end_x: 3, end_y: 4 })).toBe(
      'drag from 1, 2 to 3, 4',
    );
    expect(describeAction({ type: 'scroll', x: 1, y: 2, scroll_x: 0, scroll_y: 300 })).toBe(
      'scroll at 1, 2 by 0, 300',
    );
  });
});

describe('screenshots of a task are asked for only while they can exist', () => {
  const task = (status: Task['status'], updatedAt: string): Task => ({
    task_id: 'task_1',
    status,
    exit_code: null,
    computer_id: 'comp_1',
    instruction: 'x',
    model: 'm',
    steps: 1,
    max_steps: 5,
    created_at: at,
    updated_at: updatedAt,
    result: null,
    error: null,
    ...unstartedTaskFields(),
  });
  const now = Date.parse(at);
  const later = (minutes: number) => now + minutes * 60_000;
  const shot = 'http://127.0.0.1:4422/screenshots/comp_1/t.png';

  it('keeps them while the task or its computer runs', () => {
    expect(
      screenshotsKept(task('running', at), false, shot, 'http://127.0.0.1:4422', later(60)),
    ).toBe(true);
    expect(
      screenshotsKept(task('completed', at), true, shot, 'http://127.0.0.1:4422', later(60)),
    ).toBe(true);
  });

  it('keeps them ten minutes after the task ended, on the same server', () => {
    expect(
      screenshotsKept(task('completed', at), false, shot, 'http://localhost:4422', later(5)),
    ).toBe(true);
    expect(
      screenshotsKept(task('completed', at), false, shot, 'http://127.0.0.1:4422', later(11)),
    ).toBe(false);
    expect(
      screenshotsKept(task('completed', at), false, shot, 'http://127.0.0.1:5000', later(1)),
    ).toBe(false);
  });
});
