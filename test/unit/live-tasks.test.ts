import { describe, expect, it } from 'vitest';
import { unstartedTaskFields, type Task } from '../../src/shared/tasks.js';
import { drivingTask, drivingTasks, liveFirst } from '../../src/renderer/src/tasks/live-tasks.js';

let made = 0;
function task(status: Task['status'], computer: string, minute: number): Task {
  const at = `2026-11-22T10:${String(minute).padStart(2, '0')}:00.000Z`;
  return {
    task_id: `task_${++made}`,
    status,
    exit_code: null,
    computer_id: computer,
    instruction: `${status} on ${computer} at ${minute}`,
    model: 'demo',
    steps: 0,
    max_steps: 50,
    created_at: at,
    updated_at: at,
    result: null,
    error: null,
    ...unstartedTaskFields(),
  };
}
const ids = (tasks: Task[]) => tasks.map((t) => t.instruction);

describe('which task drives which computer', () => {
  it('names the running or paused task of each computer and none for the others', () => {
    const running = task('running', 'comp_a', 5);
    const paused = task('paused', 'comp_b', 4);
    const tasks = [
      running,
      paused,
      task('completed', 'comp_c', 3),
      task('failed', 'comp_a', 2),
      task('cancelled', 'comp_b', 1),
      task('max_steps', 'comp_d', 0),
    ];
    const drivers = drivingTasks(tasks);
    expect([...drivers]).toEqual([
      ['comp_a', running],
      ['comp_b', paused],
    ]);
    expect(drivingTask(tasks, 'comp_c')).toBeUndefined();
    expect(drivingTask(tasks, 'comp_b')).toBe(paused);
  });

  it('picks the newest live task when two name the same computer, in any order', () => {
    const older = task('running', 'comp_a', 1);
    const newer = task('paused', 'comp_a', 9);
    expect(drivingTask([older, newer], 'comp_a')).toBe(newer);
    expect(drivingTask([newer, older], 'comp_a')).toBe(newer);
  });
});

describe('the task list', () => {
  it('puts live tasks first, then the finished ones, each newest first', () => {
    const tasks = [
      task('completed', 'comp_a', 50),
      task('running', 'comp_b', 10),
      task('failed', 'comp_c', 40),
      task('paused', 'comp_d', 30),
      task('cancelled', 'comp_e', 20),
      task('running', 'comp_f', 35),
    ];
    const { live, finished } = liveFirst(tasks);
    expect(ids(live)).toEqual([
      'running on comp_f at 35',
      'paused on comp_d at 30',
      'running on comp_b at 10',
    ]);
    expect(ids(finished)).toEqual([
      'completed on comp_a at 50',
      'failed on comp_c at 40',
      'cancelled on comp_e at 20',
    ]);
  });

  it('keeps the server order of tasks started in the same millisecond', () => {
    const first = task('running', 'comp_a', 7);
    const second = task('running', 'comp_b', 7);
    expect(liveFirst([second, first]).live).toEqual([second, first]);
  });
});
