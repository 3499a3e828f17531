/** Requests the main process sends to a desktop worker, and their answers. */
import type { Point } from '../action.js';

export type WorkerButton = 'left' | 'right' | 'middle';

export type WorkerRequest =
  | { op: 'click'; at: Point; button: WorkerButton; count: number }
  | { op: 'press'; at: Point; button: WorkerButton; down: boolean }
  | { op: 'move'; at: Point }
  | { op: 'drag'; path: Point[] }
  | { op: 'scroll'; at: Point; dx: number; dy: number }
  | { op: 'keys'; keys: string[]; mode: 'tap' | 'down' | 'up' }
  | { op: 'type'; text: string }
  | { op: 'screenshot' }
  /** `ifChanged`: answer `jpeg: null` when the screen is what the previous frame showed. */
  | { op: 'frame'; quality: number; maxWidth?: number; ifChanged?: boolean }
  /**
   * Answers once the screen has changed since the last frame (at once if it has), when input was
   * sent, or after `waitMs`; with where the pointer is. Where the display cannot say when it
   * changes, always at once and `changed`.
   */
  | { op: 'changes'; waitMs: number }
  /** Answers every `changes` waiting now. */
  | { op: 'wake' }
  | { op: 'size' }
  | { op: 'cursor' }
  /** Where the display's cookie is now: nut-js connects anew for each call. */
  | { op: 'xauthority'; path: string }
  /** Answers true once the display's window manager has started, false after `waitMs`. */
  | { op: 'window-manager'; waitMs: number };

/**
 * What each request answers. Images arrive as byte views (Uint8Array; v8's deserializer may
 * place them inside the message's own buffer, so read them with their offset and length).
 */
export type WorkerResults = {
  click: null;
  press: null;
  move: null;
  drag: null;
  scroll: null;
  keys: null;
  type: null;
  screenshot: { png: Uint8Array; width: number; height: number };
  frame: { jpeg: Uint8Array | null; width: number; height: number; cursor: Point };
  changes: { changed: boolean; cursor: Point };
  wake: null;
  size: { width: number; height: number };
  cursor: Point;
  xauthority: null;
  'window-manager': boolean;
};

export type WorkerResult<R extends WorkerRequest> = WorkerResults[R['op']];

export type WorkerMessage = { id: number; request: WorkerRequest };
export type WorkerAnswer =
  { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
