import sharp from 'sharp';
import type { OutputAction } from '../../../shared/responses.js';
import type { CheckedTarget, StepCheck } from '../../../shared/task-scripts.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { isTabbed, pngSize } from '../computers/operator.js';

/**
 * The check recorded with each action of a task (docs/API.md §18): where the screen was right
 * before it, so a replay or an exported script can tell that the screen is still where the run
 * was. Browsers: the page's URL and the element under the point. Desktops: a difference hash of
 * the pixels around the point (browsers too, for exported scripts: the SDK cannot ask a page what
 * is under a point). The same hash is computed by exported scripts (REGION and the
 * cell layout below are repeated there), so it is defined here in plain arithmetic.
 */

/** Side of the square around the point that is hashed, in screenshot pixels. */
export const REGION = 64;
/** Bits of the hash that may differ for two regions to count as the same (of 64). */
export const HASH_TOLERANCE = 10;
/** Grey levels the regions' mean brightness may differ by (a difference hash misses a fill). */
export const BRIGHTNESS_TOLERANCE = 32;

const NO_CHECK: StepCheck = { url: null, target: null, region_hash: null };

/** The point an action acts at, if any. */
export function pointOf(action: OutputAction): { x: number; y: number } | undefined {
  if (action.type === 'navigate' || action.x === undefined || action.y === undefined) {
    return undefined;
  }
  return { x: action.x, y: action.y };
}

/**
 * Where the screen is now for `action`: cheap, read right before it runs. `pixels: false` leaves
 * a browser's region hash out (a replay that knows it from the run checks by the element).
 * `screen`: the screenshot the model decided on, right before this action (the first of its
 * turn), hashed instead of taking another.
 */
export async function lookBefore(
  session: ComputerSession,
  action: OutputAction,
  { pixels = true, screen }: { pixels?: boolean; screen?: Buffer } = {},
): Promise<StepCheck> {
  // A navigation sets the page itself: there is nothing to check before it.
  if (action.type === 'navigate') return NO_CHECK;
  const at = pointOf(action);
  const { operator } = session;
  // A desktop's browser is one window among others: its screen is checked by its look.
  // Browsers: the hash is for exported scripts, which cannot ask what is under a point.
  const browser = session.spec.kind === 'browser';
  const hash = async () => {
    if (!at || (browser && !pixels)) return null;
    const png = screen ?? (await operator.screenshot().catch(() => undefined))?.png;
    return png ? regionHash(png, at) : null;
  };
  if (browser && isTabbed(operator)) {
    const [look, region_hash] = await Promise.all([
      operator.look(undefined, at, at !== undefined).catch(() => undefined),
      hash(),
    ]);
    if (!look) return { ...NO_CHECK, region_hash };
    const target: CheckedTarget | null = look.target && {
      role: look.target.role,
      name: look.target.name,
      tag: look.target.tag,
      input_type: look.target.input_type,
    };
    return { url: look.url, target, region_hash };
  }
  return { url: null, target: null, region_hash: await hash() };
}

/** How the screen now differs from the recorded one, for a person to read; null when it does not. */
export function divergence(recorded: StepCheck | undefined, now: StepCheck): string | null {
  if (!recorded) return null;
  if (recorded.url !== null && now.url !== recorded.url) {
    return `the page is ${now.url ?? 'unknown'}, the run was on ${recorded.url}`;
  }
  if (recorded.target && !sameTarget(recorded.target, now.target)) {
    return `under the point is ${named(now.target)}, the run had ${named(recorded.target)}`;
  }
  // Where the element under the point is known (browsers), it decides, not the pixels.
  if (recorded.url === null && recorded.region_hash && now.region_hash) {
    const distance = hammingDistance(recorded.region_hash, now.region_hash);
    const brightness = Math.abs(meanGrey(recorded.region_hash) - meanGrey(now.region_hash));
    if (distance > HASH_TOLERANCE || brightness > BRIGHTNESS_TOLERANCE) {
      return `the screen around the point looks different (${distance} of 64 hash bits differ, brightness by ${brightness})`;
    }
  }
  return null;
}

function sameTarget(a: CheckedTarget, b: CheckedTarget | null): boolean {
  return (
    b !== null &&
    a.role === b.role &&
    a.name === b.name &&
    a.tag === b.tag &&
    a.input_type === b.input_type
  );
}

/** An element as a person would name it: `button "Buy"`. */
export function named(target: CheckedTarget | null): string {
  if (!target) return 'nothing';
  const kind = target.input_type ? `${target.input_type} field` : (target.role ?? target.tag);
  return target.name ? `${kind} "${target.name}"` : (kind ?? 'an element');
}

/**
 * A 64-bit difference hash of the REGION×REGION pixels centred on `at` (moved inside the image
 * near an edge): grey levels averaged over a 9×8 grid of cells, one bit per pair of neighbours
 * in a row (set when the left one is darker). 16 hex digits, then 2 for the region's mean grey
 * level (a button that moved away leaves a plain background: no edges, but another brightness).
 */
export async function regionHash(png: Buffer, at: { x: number; y: number }): Promise<string> {
  // Only the region is decoded into pixels (a quarter of the CPU of the whole 1280×720 screen).
  const { width, height } = pngSize(png);
  const { left, top, side } = regionAround(width, height, at);
  const { data, info } = await sharp(png)
    .extract({ left, top, width: side, height: side })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return hashPixels(data, info.width, info.height, info.channels, { x: side / 2, y: side / 2 });
}

/** The square hashed for a point: REGION wide, centred on it, moved inside the image. */
function regionAround(width: number, height: number, at: { x: number; y: number }) {
  const side = Math.min(REGION, width, height);
  const left = clamp(Math.round(at.x) - side / 2, width - side);
  const top = clamp(Math.round(at.y) - side / 2, height - side);
  return { left, top, side };
}

export function hashPixels(
  data: Uint8Array,
  width: number,
  height: number,
  channels: number,
  at: { x: number; y: number },
): string {
  const { left, top, side } = regionAround(width, height, at);
  const cells: number[] = [];
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 9; col++) {
      const x0 = left + Math.floor((col * side) / 9);
      const x1 = left + Math.floor(((col + 1) * side) / 9);
      const y0 = top + Math.floor((row * side) / 8);
      const y1 = top + Math.floor(((row + 1) * side) / 8);
      let sum = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = (y * width + x) * channels;
          sum += (data[i]! * 299 + data[i + 1]! * 587 + data[i + 2]! * 114) / 1000;
        }
      }
      cells.push(sum / Math.max(1, (x1 - x0) * (y1 - y0)));
    }
  }
  let hex = '';
  for (let row = 0; row < 8; row++) {
    let byte = 0;
    for (let col = 0; col < 8; col++) {
      const bit = cells[row * 9 + col]! < cells[row * 9 + col + 1]! ? 1 : 0;
      byte = (byte << 1) | bit;
    }
    hex += byte.toString(16).padStart(2, '0');
  }
  const mean = cells.reduce((sum, cell) => sum + cell, 0) / cells.length;
  return hex + Math.floor(mean).toString(16).padStart(2, '0');
}

/** The mean grey level a region hash ends with. */
function meanGrey(hash: string): number {
  return parseInt(hash.slice(16, 18), 16) || 0;
}

function clamp(value: number, max: number): number {
  return Math.max(0, Math.min(Math.floor(value), max));
}

export function hammingDistance(a: string, b: string): number {
  let distance = 0;
  for (let i = 0; i < 16; i += 2) {
    let diff = parseInt(a.slice(i, i + 2), 16) ^ parseInt(b.slice(i, i + 2), 16);
    while (diff) {
      distance += diff & 1;
      diff >>= 1;
    }
  }
  return distance;
}
