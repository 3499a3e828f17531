import type { ComputerSession } from '../computers/computer-session.js';
import type { CaptureOptions, Frame, Operator } from '../computers/operator.js';

/** What the hub needs of a computer: its id, its capture, and touch() (watching counts as use). */
export type Watched = Pick<ComputerSession, 'id' | 'touch'> & {
  operator: Pick<Operator, 'startCapture'>;
};

export type FrameEvent = {
  image_data: string;
  metadata: {
    timestamp: string;
    width: number;
    height: number;
    tab_id: string | null;
    frame: number;
  };
};

export type Viewer = {
  fps: number;
  quality: number;
  maxWidth?: number;
  onFrame(event: FrameEvent): void;
  onCursor(position: { x: number; y: number }): void;
};

type ViewerState = {
  viewer: Viewer;
  /** When this viewer may get its next frame: an ideal cadence, so timer lateness does not add up. */
  nextAt: number;
  pending?: FrameEvent;
  timer?: NodeJS.Timeout;
};

type Capture = {
  session: Watched;
  viewers: Set<ViewerState>;
  options: CaptureOptions;
  stop: Promise<(() => Promise<void>) | undefined>;
  frames: number;
  last?: FrameEvent;
};

/**
 * One capture per computer however many watch it (fan-out), running only while someone does.
 * Each viewer gets frames at its own rate; one that cannot keep up gets the newest frame, never a
 * queue (the SSE writer keeps at most one frame per client).
 */
export class ScreencastHub {
  private readonly captures = new Map<string, Capture>();

  get active(): number {
    return this.captures.size;
  }

  viewers(computerId: string): number {
    return this.captures.get(computerId)?.viewers.size ?? 0;
  }

  /** Starts delivering frames to a viewer; the returned function stops (and the capture with the last viewer). */
  watch(session: Watched, viewer: Viewer): () => void {
    const state: ViewerState = { viewer, nextAt: 0 };
    let capture = this.captures.get(session.id);
    if (!capture) {
      capture = this.start(session, optionsOf([viewer]));
    } else if (needsMore(capture.options, viewer)) {
      this.restart(capture, optionsOf([...[...capture.viewers].map((s) => s.viewer), viewer]));
    }
    capture.viewers.add(state);
    if (capture.last) this.deliver(state, capture.last);
    const current = capture;
    return () => {
      clearTimeout(state.timer);
      current.viewers.delete(state);
      if (current.viewers.size === 0 && this.captures.get(session.id) === current) {
        this.captures.delete(session.id);
        void this.halt(current);
      }
    };
  }

  private start(session: Watched, options: CaptureOptions): Capture {
    const capture: Capture = {
      session,
      viewers: new Set(),
      options,
      stop: Promise.resolve(undefined),
      frames: 0,
    };
    this.captures.set(session.id, capture);
    this.launch(capture);
    return capture;
  }

  private launch(capture: Capture): void {
    const onFrame = (frame: Frame) => this.fanOut(capture, frame);
    const onCursor = (position: { x: number; y: number }) => {
      for (const state of capture.viewers) state.viewer.onCursor(position);
    };
    capture.stop = capture.session.operator
      .startCapture(capture.options, onFrame, onCursor)
      .catch(() => undefined);
  }

  private restart(capture: Capture, options: CaptureOptions): void {
    void this.halt(capture, false);
    capture.options = options;
    this.launch(capture);
  }

  private async halt(capture: Capture, final = true): Promise<void> {
    const stop = await capture.stop;
    await stop?.().catch(() => {});
    if (final) for (const state of capture.viewers) clearTimeout(state.timer);
  }

  private fanOut(capture: Capture, frame: Frame): void {
    capture.frames += 1;
    const event: FrameEvent = {
      image_data: frame.jpeg.toString('base64'),
      metadata: {
        timestamp: new Date().toISOString(),
        width: frame.width,
        height: frame.height,
        tab_id: frame.tabId ?? null,
        frame: capture.frames,
      },
    };
    capture.last = event;
    capture.session.touch();
    for (const state of capture.viewers) this.deliver(state, event);
  }

  /** At most `fps` frames a second per viewer; a frame that comes too soon waits, replaced by newer ones. */
  private deliver(state: ViewerState, event: FrameEvent): void {
    const interval = 1000 / state.viewer.fps;
    const now = Date.now();
    if (now >= state.nextAt) {
      // On schedule (or less than a frame late): keep the cadence; after a pause, start afresh.
      state.nextAt = state.nextAt + interval > now ? state.nextAt + interval : now + interval;
      state.viewer.onFrame(event);
      return;
    }
    state.pending = event;
    state.timer ??= setTimeout(() => {
      state.timer = undefined;
      const pending = state.pending;
      state.pending = undefined;
      if (pending) this.deliver(state, pending);
    }, state.nextAt - now);
  }

  async close(): Promise<void> {
    const captures = [...this.captures.values()];
    this.captures.clear();
    await Promise.all(captures.map((capture) => this.halt(capture)));
  }
}

function optionsOf(viewers: Viewer[]): CaptureOptions {
  const widths = viewers.map((viewer) => viewer.maxWidth);
  return {
    fps: Math.max(...viewers.map((viewer) => viewer.fps)),
    quality: Math.max(...viewers.map((viewer) => viewer.quality)),
    maxWidth: widths.some((width) => width === undefined)
      ? undefined
      : Math.max(...(widths as number[])),
  };
}

function needsMore(current: CaptureOptions, viewer: Viewer): boolean {
  const wider =
    current.maxWidth !== undefined &&
    (viewer.maxWidth === undefined || viewer.maxWidth > current.maxWidth);
  return viewer.fps > current.fps || viewer.quality > current.quality || wider;
}
