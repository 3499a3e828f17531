import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Pacer } from '../../src/main/core/computers/pacer.js';

describe('Pacer', () => {
  let taken: string[];
  let pacer: Pacer<string>;

  beforeEach(() => {
    vi.useFakeTimers();
    taken = [];
    pacer = new Pacer(200, (value) => taken.push(value));
  });
  afterEach(() => {
    pacer.stop();
    vi.useRealTimers();
  });

  it('takes a value at once when none was taken for the interval', () => {
    pacer.push('a');
    expect(taken).toEqual(['a']);
    vi.advanceTimersByTime(200);
    pacer.push('b');
    expect(taken).toEqual(['a', 'b']);
  });

  it('holds what comes sooner and takes only the latest, when its turn comes', () => {
    pacer.push('a');
    for (const value of ['b', 'c', 'd']) {
      vi.advanceTimersByTime(50);
      pacer.push(value);
    }
    expect(taken).toEqual(['a']);
    vi.advanceTimersByTime(49);
    expect(taken).toEqual(['a']);
    vi.advanceTimersByTime(1);
    expect(taken).toEqual(['a', 'd']);
    // Twenty values 50 ms apart: one taken each 200 ms, the last of them the last pushed.
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(50);
      pacer.push(`step ${i}`);
    }
    vi.advanceTimersByTime(200);
    expect(taken.slice(2)).toEqual([
      'step 2',
      'step 6',
      'step 10',
      'step 14',
      'step 18',
      'step 19',
    ]);
  });

  it('forgets the value waiting when dropped or stopped', () => {
    pacer.push('a');
    pacer.push('stale');
    pacer.drop();
    vi.advanceTimersByTime(1000);
    expect(taken).toEqual(['a']);
    vi.advanceTimersByTime(50);
    pacer.push('b');
    pacer.push('never');
    pacer.stop();
    vi.advanceTimersByTime(1000);
    expect(taken).toEqual(['a', 'b']);
  });
});
