import { useEffect, useRef, useState, type RefObject } from 'react';
import type { ApiEvent } from '../../../shared/client/api-client.js';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/error-text.js';
import type { Size } from './input-mapping.js';

export type ScreencastState = {
  phase: 'connecting' | 'live' | 'ended' | 'error';
  message?: string;
  /** Frames drawn in the last second. */
  fps: number;
};

const RECONNECT_MS = 1000;

/**
 * Draws the computer's screencast into the canvas. Only the newest frame is decoded: when frames
 * come faster than they can be drawn, the ones in between are skipped, so the view never lags.
 * The canvas takes each frame's own size (max_width may have scaled it down); CSS scales it to
 * the window, so nothing is resampled twice.
 */
export function useScreencast(
  computerId: string,
  display: Size | undefined,
  canvas: RefObject<HTMLCanvasElement | null>,
  /** A desktop's pointer, in display pixels (its frames do not show it). */
  onCursor: (point: { x: number; y: number }) => void,
): ScreencastState {
  const api = useApi();
  const cursor = useRef(onCursor);
  cursor.current = onCursor;
  const [state, setState] = useState<ScreencastState>({ phase: 'connecting', fps: 0 });
  const drawn = useRef(0);

  useEffect(() => {
    const timer = setInterval(() => {
      const count = drawn.current;
      drawn.current = 0;
      setState((previous) => (previous.fps === count ? previous : { ...previous, fps: count }));
    }, 1000);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    if (!display) return;
    const controller = new AbortController();
    const painter = new LatestFramePainter(canvas, () => {
      drawn.current += 1;
    });
    const onMessage = ({ event, data }: ApiEvent<'streams.screencast'>) => {
      if (event === undefined && 'image_data' in data) {
        painter.offer(data.image_data);
      } else if (event === 'cursor_position' && 'x' in data) {
        cursor.current(data);
      } else if ('type' in data && data.type === 'status') {
        // The computer ended: nothing more will come, so the stream is not opened again.
        controller.abort();
        setState({ phase: 'ended', message: `ended (${data.termination_reason})`, fps: 0 });
      }
    };
    void follow(controller.signal, async (signal) => {
      const query = screencastQuery(canvas.current, display);
      setState((previous) => ({ ...previous, phase: 'live', message: undefined }));
      const params = { id: computerId };
      for await (const message of api.events('streams.screencast', { params, query, signal })) {
        onMessage(message);
      }
    }).catch((error: unknown) => {
      if (!controller.signal.aborted)
        setState({ phase: 'error', message: errorText(error), fps: 0 });
    });
    return () => controller.abort();
  }, [api, computerId, display, canvas]);

  return state;
}

/** fps=30, and frames no wider than the view shows them (less to encode, send and decode). */
function screencastQuery(element: HTMLCanvasElement | null, display: Size) {
  const shown = Math.round((element?.getBoundingClientRect().width ?? 0) * devicePixelRatio);
  const narrower = shown >= 16 && shown < display.width;
  return { fps: 30, quality: 70, ...(narrower && { max_width: shown }) };
}

/**
 * Keeps a stream open: one that closes while the computer still runs (a dropped connection) is
 * opened again, until the signal aborts.
 */
export async function follow(
  signal: AbortSignal,
  open: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  for (;;) {
    try {
      await open(signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    if (signal.aborted) return;
  }
}

/** Draws the newest frame offered into a canvas, skipping those that came while it drew. */
export class LatestFramePainter {
  private latest: string | undefined;
  private busy = false;

  constructor(
    private readonly canvas: RefObject<HTMLCanvasElement | null>,
    private readonly onDrawn: () => void,
  ) {}

  offer(base64: string): void {
    // Read by the e2e test beside frames drawn: a shortfall is the source's or the drawing's.
    const canvas = this.canvas.current;
    if (canvas)
      canvas.dataset.framesReceived = String(Number(canvas.dataset.framesReceived ?? 0) + 1);
    this.latest = base64;
    if (!this.busy) void this.paint();
  }

  private async paint(): Promise<void> {
    this.busy = true;
    try {
      for (let frame = this.latest; frame; frame = this.latest) {
        this.latest = undefined;
        await this.draw(frame);
      }
    } finally {
      this.busy = false;
    }
  }

  private async draw(frame: string): Promise<void> {
    let bitmap: ImageBitmap;
    try {
      bitmap = await createImageBitmap(new Blob([decodeBase64(frame)], { type: 'image/jpeg' }));
    } catch {
      // A frame that does not decode is skipped; the next one replaces it anyway.
      return;
    }
    const canvas = this.canvas.current;
    if (canvas && (canvas.width !== bitmap.width || canvas.height !== bitmap.height)) {
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
    }
    canvas?.getContext('2d')?.drawImage(bitmap, 0, 0);
    bitmap.close();
    if (!canvas) return;
    this.onDrawn();
    // Read by the e2e test to measure the frames actually drawn.
    canvas.dataset.framesDrawn = String(Number(canvas.dataset.framesDrawn ?? 0) + 1);
  }
}

function decodeBase64(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
