import type { PageContext } from '../../../shared/actions.js';
import type { ComputerKind } from '../../../shared/computers.js';
import type { ActionName, ActionOutcome, ActionRequest } from './action.js';

export type Screenshot = { png: Buffer; width: number; height: number; tabId?: string };

export type CaptureOptions = { quality: number; maxWidth?: number; fps: number };
export type Frame = { jpeg: Buffer; width: number; height: number; tabId?: string };
export type FrameSink = (frame: Frame) => void;
export type CursorSink = (position: { x: number; y: number }) => void;

/**
 * What a computer's driver implements. Actions that work the same everywhere (wait, screenshot
 * storage, point_and_type, debug) are composed by the session from these.
 */
export interface Operator {
  readonly kind: ComputerKind;
  /** The operator actions this driver performs; others are answered with a 400 naming the kind. */
  readonly supports: ReadonlySet<ActionName>;
  perform(request: ActionRequest): Promise<ActionOutcome>;
  screenshot(tabId?: string): Promise<Screenshot>;
  /**
   * The page of a tab (a browser's, or a desktop's own Chromium's); undefined when there is no
   * such page to describe.
   */
  pageContext(tabId?: string): Promise<PageContext | undefined>;
  /**
   * Starts producing JPEG frames of what the computer shows (only while someone watches: the
   * caller stops it when the last viewer leaves). Resolves to the function that stops it.
   */
  startCapture(
    options: CaptureOptions,
    onFrame: FrameSink,
    onCursor: CursorSink,
  ): Promise<() => Promise<void>>;
  /** The main tab's id for results that do not name one (undefined on a desktop's screen). */
  mainTabId(): string | undefined;
  /** Ends a desktop's terminal (commands were switched off for its organization). */
  endTerminal?(): void;
  close(): Promise<void>;
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Width and height from a JPEG's start-of-frame marker (baseline or progressive). */
export function jpegSize(jpeg: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset + 9 < jpeg.length) {
    const marker = jpeg[offset + 1]!;
    const length = jpeg.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xc3) {
      return { height: jpeg.readUInt16BE(offset + 5), width: jpeg.readUInt16BE(offset + 7) };
    }
    offset += 2 + length;
  }
  return { width: 0, height: 0 };
}
