import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CaptureOptions, Frame } from '../../src/main/core/computers/operator.js';
import {
  ScreencastHub,
  type FrameEvent,
  type Viewer,
  type Watched,
} from '../../src/main/core/screencast/screencast-hub.js';

/** One run of a fake computer's capture: the test sends its frames and sees when it is stopped. */
type FakeCapture = {
  options: CaptureOptions;
  frame(n: number): void;
  /**
   * A screenshot's PNG as a frame (what a capture for the recorder alone sends after a look),
   * passed on at `capturedAt` when it was held back.
   */
  png(n: number, capturedAt?: number): void;
  cursor(x: number, y: number): void;
  /** Resolves when the hub stops this capture. */
  stopped: Promise<void>;
  isStopped(): boolean;
};

/** A computer whose capture is driven by the test (frames carry their number in `tabId`). */
class FakeComputer implements Watched {
  readonly captures: FakeCapture[] = [];
  touches = 0;
  /** When set, startCapture fails (a computer that cannot capture). */
  failing = false;
  private release: (() => void) | undefined;
  /** When held, startCapture answers only once release() is called. */
  held = false;

  constructor(readonly id: string) {}

  touch(): void {
    this.touches += 1;
  }

  releaseStart(): void {
    this.release?.();
  }

  readonly operator = {
    startCapture: async (
      options: CaptureOptions,
      onFrame: (frame: Frame) => void,
      onCursor: (position: { x: number; y: number }) => void,
    ): Promise<() => Promise<void>> => {
      let stop!: () => void;
      let done = false;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      this.captures.push({
        options,
        frame: (n) => onFrame({ jpeg: Buffer.from([n]), width: 100, height: 50, tabId: `${n}` }),
        png: (n, capturedAt) =>
          onFrame({ png: Buffer.from([n]), width: 100, height: 50, tabId: `${n}`, capturedAt }),
        cursor: (x, y) => onCursor({ x, y }),
        stopped,
        isStopped: () => done,
      });
      if (this.held) await new Promise<void>((resolve) => (this.release = resolve));
      if (this.failing) throw new Error('no display');
      return () => {
        done = true;
        stop();
        return Promise.resolve();
      };
    },
  };

  get capture(): FakeCapture {
    return this.captures.at(-1)!;
  }
}

/** A passive viewer like the flight recorder's (5 frames/s, quality 60), keeping nothing. */
function recorder(onPicture: Viewer['onPicture'] = () => {}): Viewer {
  return { fps: 5, quality: 60, passive: true, onPicture, onCursor: () => {} };
}

/** A viewer that records the numbers of the frames it got. */
function viewer(fps: number, options: Partial<Viewer> = {}) {
  const frames: number[] = [];
  const events: FrameEvent[] = [];
  const cursors: Array<{ x: number; y: number }> = [];
  return {
    frames,
    events,
    cursors,
    fps,
    quality: 50,
    onFrame(event: FrameEvent) {
      events.push(event);
      frames.push(Buffer.from(event.image_data, 'base64')[0]!);
    },
    onCursor(position: { x: number; y: number }) {
      cursors.push(position);
    },
    ...options,
  };
}

/** The capture sends frame 0, 1, 2… every `everyMs` for `forMs`, fake time advancing in between. */
function stream(computer: FakeComputer, everyMs: number, forMs: number, first = 0): void {
  for (let t = 0; t < forMs; t += everyMs) {
    computer.capture.frame(first + t / everyMs);
    vi.advanceTimersByTime(everyMs);
  }
}

let hub: ScreencastHub;

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  hub = new ScreencastHub();
});
afterEach(async () => {
  await hub.close();
  vi.useRealTimers();
});

describe('ScreencastHub', () => {
  it('runs one capture per computer however many watch it, and sends each frame to every viewer', () => {
    const computer = new FakeComputer('comp_a');
    const other = new FakeComputer('comp_b');
    const one = viewer(10);
    const two = viewer(10);
    hub.watch(computer, one);
    hub.watch(computer, two);
    hub.watch(other, viewer(10));
    expect(computer.captures).toHaveLength(1);
    expect(other.captures).toHaveLength(1);
    expect(hub.active).toBe(2);
    expect(hub.viewers('comp_a')).toBe(2);

    computer.capture.frame(7);
    expect(one.frames).toEqual([7]);
    expect(two.frames).toEqual([7]);
    expect(one.events[0]!.metadata).toMatchObject({
      width: 100,
      height: 50,
      tab_id: '7',
      frame: 1,
    });
    expect(computer.touches).toBe(1);
    computer.capture.cursor(3, 4);
    expect(one.cursors).toEqual([{ x: 3, y: 4 }]);
    expect(two.cursors).toEqual([{ x: 3, y: 4 }]);
  });

  it('a passive viewer (the recorder) gets JPEG bytes, is not counted, and its frames are not use', () => {
    const computer = new FakeComputer('comp_a');
    const jpegs: number[] = [];
    hub.watch(
      computer,
      recorder((frame) => jpegs.push(frame.jpeg![0]!)),
    );
    expect(hub.viewers('comp_a')).toBe(0);
    expect(hub.capturing('comp_a')).toBe(true);
    computer.capture.frame(4);
    expect(jpegs).toEqual([4]);
    expect(computer.touches).toBe(0);
    // A person watching makes frames use again.
    hub.watch(computer, viewer(10));
    computer.capture.frame(5);
    expect(computer.touches).toBe(1);
  });

  it('gives a PNG frame to the passive viewer as it came, and never puts one on a person’s wire', () => {
    const computer = new FakeComputer('comp_a');
    const pictures: Frame[] = [];
    hub.watch(
      computer,
      recorder((frame) => pictures.push(frame)),
    );
    const person = viewer(10);
    hub.watch(computer, person);
    computer.capture.png(7);
    vi.advanceTimersByTime(200);
    computer.capture.frame(8);
    vi.advanceTimersByTime(200);
    expect(pictures.map((frame) => [frame.png?.[0], frame.jpeg?.[0]])).toEqual([
      [7, undefined],
      [undefined, 8],
    ]);
    expect(person.frames).toEqual([8]);
  });

  it('gives the passive viewer each frame with when it was taken, not when its rate let it through', () => {
    const computer = new FakeComputer('comp_a');
    const pictures: Array<[number | undefined, number]> = [];
    hub.watch(
      computer,
      recorder((frame, at) => pictures.push([(frame.jpeg ?? frame.png)[0], at])),
    );
    computer.capture.frame(1);
    vi.advanceTimersByTime(50);
    // Comes 50 ms after the last one: the 5 frames a second let it through 150 ms later.
    computer.capture.frame(2);
    vi.advanceTimersByTime(300);
    // A look held back by its capture since 300 ms: it came at 350.
    computer.capture.png(3, 300);
    vi.advanceTimersByTime(200);
    expect(pictures).toEqual([
      [1, 0],
      [2, 50],
      [3, 300],
    ]);
  });

  it('captures what the people watching ask for, and only the passive viewer’s rate once they left', () => {
    const computer = new FakeComputer('comp_a');
    hub.watch(computer, recorder());
    // The recorder alone: captured between actions, out of their way.
    const alone = { fps: 5, quality: 60, maxWidth: undefined, betweenActions: true };
    expect(computer.capture.options).toEqual(alone);
    const leave = hub.watch(computer, viewer(30, { maxWidth: 640 }));
    // The person's size, though the recorder takes any: their frames are never larger than asked.
    // And live: a person sees an action as it happens.
    expect(computer.capture.options).toEqual({
      fps: 30,
      quality: 50,
      maxWidth: 640,
      betweenActions: false,
    });
    leave();
    expect(computer.captures).toHaveLength(3);
    expect(computer.capture.options).toEqual(alone);
  });

  it('gives each viewer frames at its own rate, the newest frame when one is due', () => {
    const computer = new FakeComputer('comp_a');
    const fast = viewer(10);
    const slow = viewer(2);
    hub.watch(computer, fast);
    hub.watch(computer, slow);
    // 50 frames a second for one second.
    stream(computer, 20, 1000);
    expect(fast.frames).toEqual([0, 4, 9, 14, 19, 24, 29, 34, 39, 44, 49]);
    expect(slow.frames).toEqual([0, 24, 49]);
  });

  it('sends a frame that comes between two due times when the next one is due, unless a newer came', () => {
    const computer = new FakeComputer('comp_a');
    const watcher = viewer(5);
    hub.watch(computer, watcher);
    computer.capture.frame(1);
    vi.advanceTimersByTime(50);
    computer.capture.frame(2);
    expect(watcher.frames).toEqual([1]);
    vi.advanceTimersByTime(150);
    expect(watcher.frames).toEqual([1, 2]);
    // Nothing new: nothing more is sent.
    vi.advanceTimersByTime(1000);
    expect(watcher.frames).toEqual([1, 2]);
  });

  it('gives a viewer who joins a running capture its newest frame at once', () => {
    const computer = new FakeComputer('comp_a');
    hub.watch(computer, viewer(10));
    computer.capture.frame(3);
    const late = viewer(10);
    hub.watch(computer, late);
    expect(late.frames).toEqual([3]);
  });

  it('gives a person who joins the recorder alone no frame until the live capture sends one', () => {
    const computer = new FakeComputer('comp_a');
    hub.watch(computer, recorder());
    // Taken between actions: the screen may have changed since.
    computer.capture.frame(3);
    const person = viewer(10);
    hub.watch(computer, person);
    expect(person.frames).toEqual([]);
    expect(computer.capture.options.betweenActions).toBe(false);
    computer.capture.frame(4);
    expect(person.frames).toEqual([4]);
  });

  it('stops the capture with the last viewer, and sends nothing after', async () => {
    const computer = new FakeComputer('comp_a');
    const one = viewer(10);
    const two = viewer(1);
    const leaveOne = hub.watch(computer, one);
    const leaveTwo = hub.watch(computer, two);
    computer.capture.frame(1);
    computer.capture.frame(2);
    leaveOne();
    expect(computer.capture.isStopped()).toBe(false);
    expect(hub.viewers('comp_a')).toBe(1);
    leaveTwo();
    expect(hub.viewers('comp_a')).toBe(0);
    expect(hub.active).toBe(0);
    await computer.capture.stopped;
    // The frame the slow viewer was waiting for is dropped with it.
    expect(vi.getTimerCount()).toBe(0);
    computer.capture.frame(3);
    vi.advanceTimersByTime(2000);
    expect(one.frames).toEqual([1]);
    expect(two.frames).toEqual([1]);
  });

  it('starts a new capture for the next viewer after the last one left', async () => {
    const computer = new FakeComputer('comp_a');
    const leave = hub.watch(computer, viewer(10));
    leave();
    await computer.capture.stopped;
    const again = viewer(10);
    hub.watch(computer, again);
    expect(computer.captures).toHaveLength(2);
    expect(computer.capture.isStopped()).toBe(false);
    computer.capture.frame(5);
    expect(again.frames).toEqual([5]);
  });

  it('restarts the capture with the highest rate, quality and width when a viewer needs more', async () => {
    const computer = new FakeComputer('comp_a');
    const first = viewer(5, { quality: 40, maxWidth: 640 });
    hub.watch(computer, first);
    hub.watch(computer, viewer(2, { quality: 30, maxWidth: 320 }));
    expect(computer.captures).toHaveLength(1);
    expect(computer.capture.options).toMatchObject({ fps: 5, quality: 40, maxWidth: 640 });

    const demanding = viewer(30, { quality: 80 });
    hub.watch(computer, demanding);
    expect(computer.captures).toHaveLength(2);
    await computer.captures[0]!.stopped;
    expect(computer.capture.options).toMatchObject({ fps: 30, quality: 80, maxWidth: undefined });
    vi.advanceTimersByTime(1000);
    computer.capture.frame(9);
    expect(first.frames.at(-1)).toBe(9);
    expect(demanding.frames.at(-1)).toBe(9);
    expect(hub.active).toBe(1);
  });

  it('sends no frame of a capture replaced by a restart, even one still starting', async () => {
    const computer = new FakeComputer('comp_a');
    computer.held = true;
    hub.watch(computer, recorder());
    computer.held = false;
    const person = viewer(30, { maxWidth: 640 });
    hub.watch(computer, person);
    const [replaced, live] = computer.captures;
    // The replaced capture had not started yet: its first frame comes before its stop.
    replaced!.frame(1);
    replaced!.cursor(5, 5);
    live!.frame(2);
    expect(person.frames).toEqual([2]);
    expect(person.cursors).toEqual([]);
    computer.releaseStart();
    await replaced!.stopped;
  });

  it('stops a capture that had not started yet when its viewer left', async () => {
    const computer = new FakeComputer('comp_a');
    computer.held = true;
    const leave = hub.watch(computer, viewer(10));
    leave();
    expect(hub.active).toBe(0);
    computer.releaseStart();
    await computer.capture.stopped;
    expect(computer.capture.isStopped()).toBe(true);
  });

  it('survives a capture that fails to start, and starts afresh for the next viewer', async () => {
    const computer = new FakeComputer('comp_a');
    computer.failing = true;
    const leave = hub.watch(computer, viewer(10));
    leave();
    computer.failing = false;
    hub.watch(computer, viewer(10));
    expect(computer.captures).toHaveLength(2);
    await hub.close();
    await computer.capture.stopped;
  });

  it('close() stops every capture', async () => {
    const computers = [new FakeComputer('comp_a'), new FakeComputer('comp_b')];
    for (const computer of computers) hub.watch(computer, viewer(10));
    await hub.close();
    expect(hub.active).toBe(0);
    expect(computers.map((computer) => computer.capture.isStopped())).toEqual([true, true]);
  });
});
