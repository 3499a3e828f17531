import type { PageContext } from '../../../shared/actions.js';
import type { ApprovalTarget } from '../../../shared/approvals.js';
import type { ComputerDownload, ComputerKind } from '../../../shared/computers.js';
import sharp from 'sharp';
import type { Action, ActionName, ActionOutcome, ActionRequest } from './action.js';

export type Screenshot = { png: Buffer; width: number; height: number; tabId?: string };

export type CaptureOptions = {
  quality: number;
  maxWidth?: number;
  fps: number;
  /**
   * Nobody watches live (only the recorder): the screen may be captured between actions rather
   * than during them, as long as each action's outcome and anything the screen does on its own
   * are captured.
   */
  betweenActions?: boolean;
};
/**
 * A frame of a capture: a JPEG, as viewers get it; or, from a capture between actions (the
 * recorder alone), a screenshot's PNG as it was taken: the video turns it into a JPEG only if it
 * is ever encoded (most recordings are never watched, and the conversion cost an agent's step
 * ~10 ms of CPU).
 */
export type Frame = {
  width: number;
  height: number;
  tabId?: string;
  /**
   * When the picture was taken (epoch ms), for one passed on later than that (a look held to
   * the frame rate); others are taken as they come.
   */
  capturedAt?: number;
} & ({ jpeg: Buffer; png?: never } | { png: Buffer; jpeg?: never });
export type FrameSink = (frame: Frame) => void;
export type CursorSink = (position: { x: number; y: number }) => void;

/** A request whose action is one of the actions named by N. */
export type RequestOf<N extends ActionName> = Omit<ActionRequest, 'action'> & {
  action: Extract<Action, { type: N }>;
};

/** The files a computer downloaded, by name. */
export interface DownloadFolder {
  list(): Promise<ComputerDownload[]>;
  /** The file's path; a name not listed is a 404. */
  path(name: string): Promise<string>;
}

/**
 * What every kind of computer does. Actions that work the same everywhere (wait, screenshot
 * storage, point_and_type, debug) are composed by the action runner from these.
 */
export interface Operator<N extends ActionName = ActionName> {
  readonly kind: ComputerKind;
  /** The actions it performs: its driver's capabilities; others are refused before perform. */
  readonly capabilities: ReadonlySet<N>;
  perform(request: RequestOf<N>): Promise<ActionOutcome>;
  screenshot(tabId?: string): Promise<Screenshot>;
  /**
   * Starts producing JPEG frames of what the computer shows (only while someone watches: the
   * caller stops it when the last viewer leaves). Resolves to the function that stops it.
   */
  startCapture(
    options: CaptureOptions,
    onFrame: FrameSink,
    onCursor: CursorSink,
  ): Promise<() => Promise<void>>;
  /** What its browser downloaded (a desktop's own browser included). */
  readonly downloads: DownloadFolder;
  close(): Promise<void>;
}

/** The page an action would act on, as far as the kind of computer can tell. */
export type PageLook = { tabId: string | null; url: string | null; target: ApprovalTarget | null };

/** An operator with tabs: its pages can be described, and one of them is the main tab. */
export interface TabbedOperator<N extends ActionName = ActionName> extends Operator<N> {
  /**
   * The page an action ran in (`executed`: the tab its outcome names; `requested`: the tab_id
   * asked for); undefined when there is no such page to describe.
   */
  pageContext(tab: { executed?: string; requested?: string }): Promise<PageContext | undefined>;
  /** The main tab's id for results that do not name one (undefined on a desktop's screen). */
  mainTabId(): string | undefined;
  /**
   * The tab an action would run in, its URL, and with `target` the element under `at` (or the
   * focused one when `at` is undefined): what a policy checks and an approval shows.
   */
  look(
    tabId: string | undefined,
    at: { x: number; y: number } | undefined,
    target: boolean,
  ): Promise<PageLook>;
}

export function isTabbed(operator: Operator): operator is TabbedOperator {
  return 'pageContext' in operator && 'mainTabId' in operator;
}

/** Whether the operator performs this request's action (narrows the request to its actions). */
export function performs<N extends ActionName>(
  operator: Operator<N>,
  request: ActionRequest,
): request is RequestOf<N> & ActionRequest {
  return (operator.capabilities as ReadonlySet<ActionName>).has(request.action.type);
}

/** An operator with a terminal its organization's commands setting can take away. */
export interface TerminalOperator extends Operator {
  /** Ends its terminal (commands were switched off for its organization). */
  endTerminal(): void;
}

export function hasTerminal(operator: Operator): operator is TerminalOperator {
  return 'endTerminal' in operator;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Whether the bytes begin as a PNG does (its eight-byte signature). */
export function isPng(bytes: Buffer): boolean {
  return bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE);
}

/** Width and height from a PNG's IHDR chunk (its first 24 bytes). */
export function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** A PNG screenshot as a frame of a capture: JPEG at its quality, no wider than its maxWidth. */
export function jpegOfPng(
  png: Buffer,
  options: Pick<CaptureOptions, 'quality' | 'maxWidth'>,
): Promise<Buffer> {
  const image = sharp(png).flatten();
  if (options.maxWidth) image.resize({ width: options.maxWidth, withoutEnlargement: true });
  return image.jpeg({ quality: options.quality }).toBuffer();
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
