import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Activity, keepOutOfActions } from '../../src/main/core/computers/activity.js';

/** An action the test ends when it wants. */
function start(activity: Activity): () => Promise<void> {
  let end!: () => void;
  const done = activity.around(() => new Promise<void>((resolve) => (end = resolve)));
  return async () => {
    end();
    await done;
  };
}

describe('Activity', () => {
  it('is busy from the first action that starts to the last that ends, even when one fails', async () => {
    const activity = new Activity();
    const seen: boolean[] = [];
    const unsubscribe = activity.subscribe((busy) => seen.push(busy));
    const one = start(activity);
    const two = start(activity);
    expect(activity.busy).toBe(true);
    await one();
    expect(activity.busy).toBe(true);
    await two();
    await expect(
      activity.around(() => Promise.reject(new Error('no such element'))),
    ).rejects.toThrow('no such element');
    expect(activity.busy).toBe(false);
    expect(seen).toEqual([true, false, true, false]);
    unsubscribe();
    await start(activity)();
    expect(seen).toHaveLength(4);
  });
});

describe('keepOutOfActions', () => {
  let activity: Activity;
  let runs: boolean[];
  let stop: () => void;

  beforeEach(() => {
    vi.useFakeTimers();
    activity = new Activity();
    runs = [];
    stop = keepOutOfActions(activity, (run) => runs.push(run));
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
  });

  it('stops the capture during an action and runs it once the screen has been free of actions for 100 ms', async () => {
    const end = start(activity);
    expect(runs).toEqual([false]);
    vi.advanceTimersByTime(50);
    await end();
    vi.advanceTimersByTime(99);
    expect(runs).toEqual([false]);
    vi.advanceTimersByTime(1);
    expect(runs).toEqual([false, true]);
  });

  it('waits while actions follow each other closely, but not longer than a second between captures', async () => {
    for (let i = 0; i < 9; i++) {
      const end = start(activity);
      vi.advanceTimersByTime(60);
      await end();
      vi.advanceTimersByTime(50);
    }
    // 9 × 110 ms of actions with 50 ms gaps: nothing captured yet.
    expect(runs.filter(Boolean)).toHaveLength(0);
    const end = start(activity);
    vi.advanceTimersByTime(60);
    await end();
    // Over a second since the capture stopped: this action's outcome is captured at once.
    expect(runs.at(-1)).toBe(true);
  });

  it('captures an action that lasts longer than 300 ms (a page loading) while it runs', async () => {
    const end = start(activity);
    vi.advanceTimersByTime(299);
    expect(runs).toEqual([false]);
    vi.advanceTimersByTime(1);
    expect(runs).toEqual([false, true]);
    await end();
    vi.advanceTimersByTime(1000);
    expect(runs).toEqual([false, true, true]);
  });

  it('stops telling once unsubscribed', async () => {
    stop();
    await start(activity)();
    vi.advanceTimersByTime(1000);
    expect(runs).toEqual([]);
  });
});
