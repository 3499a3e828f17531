import { describe, expect, it } from 'vitest';
import { StallWatch } from '../../src/main/core/computers/browser/stall-watch.js';

/** Times in ms from the screencast's start. */
describe('StallWatch', () => {
  it('restarts a screencast that sent no frame for a change told of after a quiet while', () => {
    const watch = new StallWatch(0);
    watch.frame(50);
    watch.hint(1000);
    expect(watch.stalled(1900)).toBe(false);
    expect(watch.stalled(2000)).toBe(true);
  });

  it('restarts, later, one whose last frame came just before the hint and none after', () => {
    // That frame may have shown the change (it is drawn sooner than the hint is sent), or been
    // the last before Chromium stalled: a person must not be left with a still picture.
    const watch = new StallWatch(0);
    watch.frame(50);
    watch.hint(200);
    expect(watch.stalled(1200)).toBe(false);
    expect(watch.stalled(3100)).toBe(false);
    expect(watch.stalled(3200)).toBe(true);
  });

  it('is satisfied by any frame after the hint', () => {
    const watch = new StallWatch(0);
    watch.frame(50);
    watch.hint(200);
    watch.frame(260);
    watch.hint(2000);
    watch.frame(2050);
    expect(watch.stalled(10_000)).toBe(false);
  });

  it('a second hint long after the last frame makes the first one sure', () => {
    const watch = new StallWatch(0);
    watch.frame(50);
    watch.hint(200);
    watch.hint(400);
    expect(watch.stalled(1200)).toBe(true);
  });

  it('restarts less often while restarts show nothing new, and as often again once frames flow', () => {
    const watch = new StallWatch(0);
    watch.hint(500);
    expect(watch.stalled(1500)).toBe(true);
    watch.hint(1800);
    expect(watch.stalled(2800)).toBe(false);
    expect(watch.stalled(3800)).toBe(true);
    // Frames come on their own again: the next stall is caught after STALL_MS.
    watch.frame(6000);
    watch.hint(7000);
    expect(watch.stalled(8000)).toBe(true);
  });
});
