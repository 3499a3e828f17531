import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Activity, keepOutOfActions } from '../../src/main/core/computers/activity.js';

/** An action (or a screenshot) the test ends when it wants. */
function start(activity: Activity, work: 'action' | 'screenshot' = 'action'): () => Promise<void> {
  let end!: () => void;
  const done = activity.around(() => new Promise<void>((resolve) => (end = resolve)), work);
  return async () => {
    end();
    await done;
  };
}

describe('Activity', () => {
  it('is busy from the first action that starts to the last that ends, even when one fails', async () => {
    const activity = new Activity();
    const seen: boolean[] = [];
    const unsubscribe = activity.subscribe((event) => seen.push(event.type === 'busy'));
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

describe('keepOutOfActions, taking screenshots as frames', () => {
  let activity: Activity;
  let runs: boolean[];
  /** Whether each run came after a look (nothing done to the screen since a screenshot). */
  let afterLooks: boolean[];
  let shown: string[];
  let stop: () => void;

  beforeEach(() => {
    vi.useFakeTimers();
    activity = new Activity();
    runs = [];
    afterLooks = [];
    shown = [];
    stop = keepOutOfActions(
      activity,
      (run, afterLook) => {
        runs.push(run);
        if (run) afterLooks.push(afterLook === true);
      },
      (png) => shown.push(png.toString()),
    );
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
  });

  /** One step of an agent: an action, then a screenshot of the outcome. */
  async function step(name: string): Promise<void> {
    const act = start(activity);
    vi.advanceTimersByTime(50);
    await act();
    vi.advanceTimersByTime(20);
    const look = start(activity, 'screenshot');
    vi.advanceTimersByTime(50);
    activity.shown(Buffer.from(name));
    await look();
    vi.advanceTimersByTime(20);
  }

  it('hands each screenshot over, and a stream of steps that each look needs no other capture', async () => {
    for (let i = 0; i < 20; i++) await step(`step ${i}`);
    // 20 × 140 ms of steps: every outcome was in a screenshot, none was captured otherwise.
    expect(shown).toHaveLength(20);
    expect(shown.at(-1)).toBe('step 19');
    expect(runs.filter(Boolean)).toHaveLength(0);
    vi.advanceTimersByTime(100);
    expect(runs.at(-1)).toBe(true);
    // The screen is as the last screenshot showed it: the capture may rest until it changes.
    expect(afterLooks).toEqual([true]);
  });

  it('runs the capture as after a look only while no action came since the screenshot', async () => {
    const look = start(activity, 'screenshot');
    activity.shown(Buffer.from('seen'));
    await look();
    vi.advanceTimersByTime(100);
    await start(activity)();
    vi.advanceTimersByTime(100);
    // An action with no screenshot of its outcome: captured as usual.
    expect(afterLooks).toEqual([true, false]);
  });

  it('does not capture a screenshot while it runs, however long it takes', async () => {
    const look = start(activity, 'screenshot');
    vi.advanceTimersByTime(2000);
    expect(runs).toEqual([false]);
    activity.shown(Buffer.from('late'));
    await look();
    vi.advanceTimersByTime(100);
    expect(runs).toEqual([false, true]);
    expect(shown).toEqual(['late']);
  });

  it('still captures actions with no screenshot between them at least once a second', async () => {
    for (let i = 0; i < 10; i++) {
      const act = start(activity);
      vi.advanceTimersByTime(60);
      await act();
      vi.advanceTimersByTime(50);
    }
    expect(runs.filter(Boolean)).toHaveLength(1);
  });
});

describe('keepOutOfActions, with nobody taking screenshots', () => {
  it('treats a screenshot as an action: a long one is captured while it runs', async () => {
    vi.useFakeTimers();
    const activity = new Activity();
    const runs: boolean[] = [];
    const stop = keepOutOfActions(activity, (run) => runs.push(run));
    const look = start(activity, 'screenshot');
    vi.advanceTimersByTime(300);
    expect(runs).toEqual([false, true]);
    activity.shown(Buffer.from('nobody takes it'));
    await look();
    stop();
    vi.useRealTimers();
  });
});
