import type { PageContext } from '../../../shared/actions.js';
import type { ComputerKind } from '../../../shared/computers.js';
import type { ActionName, ActionOutcome, ActionRequest } from './action.js';

export type Screenshot = { png: Buffer; width: number; height: number; tabId?: string };

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
  /** Browser only: where the action ran. */
  pageContext(tabId?: string): Promise<PageContext | undefined>;
  /** The main tab's id (browser) for results that do not name one. */
  mainTabId(): string | undefined;
  close(): Promise<void>;
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
