import type { ComputerSession } from '../computers/computer-session.js';
import type { CaptureOptions, Frame, Operator } from '../computers/operator.js';
import { Pacer } from '../computers/pacer.js';

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
  /**
   * Watches without using the computer (the flight recorder): its frames do not count as
   * activity, so an idle computer still idles out, and it is not counted by viewers().
   */
  passive?: boolean;
  /** Each frame as the screencast route sends it (base64 made once per frame, only if asked). */
  onFrame?(event: FrameEvent): void;
  /**
   * Each frame as it came, with when it was taken (epoch ms; a viewer with a lower frame rate
   * gets it later): a JPEG, or (from a capture for passive viewers alone) a screenshot's PNG.
   * Only this viewer kind may get PNG frames.
   */
  onPicture?(frame: Frame, at: number): void;
  onCursor(position: { x: number; y: number }): void;
};

/** A frame as delivered: its bytes, and its wire form made on first use. */
type Delivery = { frame: Frame; number: number; at: number; event?: FrameEvent };

type ViewerState = {
  viewer: Viewer;
  /** At most `fps` frames a second; a frame that comes too soon waits, replaced by newer ones. */
  pacer: Pacer<Delivery>;
};

type Capture = {
  session: Watched;
  viewers: Set<ViewerState>;
  options: CaptureOptions;
  stop: Promise<(() => Promise<void>) | undefined>;
  /** Starts of its capture so far (a restart starts it again with other options). */
  launches: number;
  frames: number;
  last?: Delivery;
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

  /** Whether a computer's screen is being captured (for people or the recorder). */
  capturing(computerId: string): boolean {
    return this.captures.has(computerId);
  }

  /** How many clients watch a computer (the recorder is not one). */
  viewers(computerId: string): number {
    const viewers = this.captures.get(computerId)?.viewers ?? [];
    return [...viewers].filter((state) => !state.viewer.passive).length;
  }

  /** Starts delivering frames to a viewer; the returned function stops (and the capture with the last viewer). */
  watch(session: Watched, viewer: Viewer): () => void {
    const state: ViewerState = {
      viewer,
      pacer: new Pacer(1000 / viewer.fps, (delivery) => this.send(viewer, delivery)),
    };
    let capture = this.captures.get(session.id);
    // A capture between actions (the recorder's alone) may not have the screen as it is now.
    let stale = false;
    if (!capture) {
      capture = this.start(session, optionsOf([viewer]));
    } else {
      stale = capture.options.betweenActions === true && !viewer.passive;
      const wanted = optionsOf([...[...capture.viewers].map((s) => s.viewer), viewer]);
      if (!sameOptions(wanted, capture.options)) this.restart(capture, wanted);
    }
    capture.viewers.add(state);
    // The newest frame at once, unless it is larger than this viewer takes (a capture for others
    // that is about to restart at this viewer's size) or may be stale: the restarted capture's
    // first frame, which comes at once, is the screen as it is.
    const last = capture.last;
    if (last && !stale && (!viewer.maxWidth || last.frame.width <= viewer.maxWidth))
      state.pacer.push(last);
    const current = capture;
    return () => {
      state.pacer.stop();
      current.viewers.delete(state);
      if (this.captures.get(session.id) !== current) return;
      if (current.viewers.size === 0) {
        this.captures.delete(session.id);
        void this.halt(current);
        return;
      }
      // The ones left may need less (the recorder after a live view closed): capture only that.
      const left = optionsOf([...current.viewers].map((other) => other.viewer));
      if (!sameOptions(left, current.options)) this.restart(current, left);
    };
  }

  private start(session: Watched, options: CaptureOptions): Capture {
    const capture: Capture = {
      session,
      viewers: new Set(),
      options,
      stop: Promise.resolve(undefined),
      launches: 0,
      frames: 0,
    };
    this.captures.set(session.id, capture);
    this.launch(capture);
    return capture;
  }

  private launch(capture: Capture): void {
    // A capture replaced by a restart may still send a frame or two while it stops (one it was
    // starting when replaced): those are not the viewers' any more (another size, another rate).
    const launch = ++capture.launches;
    const current = () => capture.launches === launch;
    const onFrame = (frame: Frame) => {
      if (current()) this.fanOut(capture, frame);
    };
    const onCursor = (position: { x: number; y: number }) => {
      if (!current()) return;
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
    if (final) for (const state of capture.viewers) state.pacer.stop();
  }

  private fanOut(capture: Capture, frame: Frame): void {
    capture.frames += 1;
    const delivery: Delivery = {
      frame,
      number: capture.frames,
      at: frame.capturedAt ?? Date.now(),
    };
    capture.last = delivery;
    // Someone watching is using the computer; the recorder alone is not.
    if ([...capture.viewers].some((state) => !state.viewer.passive)) capture.session.touch();
    for (const state of capture.viewers) state.pacer.push(delivery);
  }

  private send(viewer: Viewer, delivery: Delivery): void {
    viewer.onPicture?.(delivery.frame, delivery.at);
    const { frame } = delivery;
    // The wire form is JPEG. A PNG frame comes only from a capture for the recorder alone, which
    // restarts before a person's viewer gets a frame; should one come through, it is not sent.
    if (!viewer.onFrame || !frame.jpeg) return;
    delivery.event ??= {
      image_data: frame.jpeg.toString('base64'),
      metadata: {
        timestamp: new Date(delivery.at).toISOString(),
        width: frame.width,
        height: frame.height,
        tab_id: frame.tabId ?? null,
        frame: delivery.number,
      },
    };
    viewer.onFrame(delivery.event);
  }

  async close(): Promise<void> {
    const captures = [...this.captures.values()];
    this.captures.clear();
    await Promise.all(captures.map((capture) => this.halt(capture)));
  }
}

/**
 * What to capture for these viewers: what the people among them ask for (the most of it), or,
 * with only passive viewers left, what those ask for. A recorder thus records what people see
 * while they watch and never makes a person's frames larger than they asked; alone, it lets the
 * capture keep out of actions' way.
 */
function optionsOf(all: Viewer[]): CaptureOptions {
  const people = all.filter((viewer) => !viewer.passive);
  const viewers = people.length > 0 ? people : all;
  const widths = viewers.map((viewer) => viewer.maxWidth);
  return {
    betweenActions: people.length === 0,
    fps: Math.max(...viewers.map((viewer) => viewer.fps)),
    quality: Math.max(...viewers.map((viewer) => viewer.quality)),
    maxWidth: widths.some((width) => width === undefined)
      ? undefined
      : Math.max(...(widths as number[])),
  };
}

function sameOptions(a: CaptureOptions, b: CaptureOptions): boolean {
  return (
    a.fps === b.fps &&
    a.quality === b.quality &&
    a.maxWidth === b.maxWidth &&
    a.betweenActions === b.betweenActions
  );
}
