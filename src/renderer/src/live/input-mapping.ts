/** Turning what a person does on the live view into Lightcone actions. Pure, so it reads plainly. */

export type Size = { width: number; height: number };
export type Point = { x: number; y: number };

/**
 * A point on the displayed view → the computer's screenshot pixel. The view may be scaled to the
 * window and the frames to max_width; the computer's actions take display pixels, so the mapping
 * goes from the element's box straight to the display size.
 */
export function toComputerPoint(
  client: Point,
  box: { left: number; top: number; width: number; height: number },
  display: Size,
): Point {
  // Mouse events report whole CSS pixels; the middle of that pixel is the best guess of the
  // point meant when one CSS pixel covers more than one display pixel.
  const scale = (at: number, start: number, length: number, pixels: number) =>
    Math.min(
      pixels - 1,
      Math.max(0, Math.floor(((Math.floor(at) + 0.5 - start) / length) * pixels)),
    );
  return {
    x: scale(client.x, box.left, box.width, display.width),
    y: scale(client.y, box.top, box.height, display.height),
  };
}

type KeyLike = Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey' | 'shiftKey'>;

export type KeyAction = { type: 'type'; text: string } | { type: 'hotkey'; keys: string[] };

const MODIFIERS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'CapsLock', 'OS']);
const NAMED: Record<string, string> = {
  Enter: 'enter',
  Escape: 'escape',
  Tab: 'tab',
  Backspace: 'backspace',
  Delete: 'delete',
  Insert: 'insert',
  Home: 'home',
  End: 'end',
  PageUp: 'pageup',
  PageDown: 'pagedown',
  ArrowUp: 'arrowup',
  ArrowDown: 'arrowdown',
  ArrowLeft: 'arrowleft',
  ArrowRight: 'arrowright',
  ' ': 'space',
};

/**
 * A keydown → the action that reproduces it. Printable characters without Ctrl/Alt/Meta are text
 * (the layout already applied Shift); anything else is a key combination. Lone modifiers do
 * nothing: they travel with the key they modify.
 */
export function keyAction(event: KeyLike): KeyAction | undefined {
  if (MODIFIERS.has(event.key) || event.key === 'Unidentified' || event.key === 'Dead') return;
  const chord = event.ctrlKey || event.altKey || event.metaKey;
  if (event.key.length === 1 && !chord) return { type: 'type', text: event.key };
  const name = NAMED[event.key] ?? (/^F([1-9]|1\d|2[0-4])$/.test(event.key) ? event.key : '');
  const key = name ? name.toLowerCase() : event.key.length === 1 ? event.key.toLowerCase() : '';
  if (!key) return;
  const keys: string[] = [];
  if (event.ctrlKey) keys.push('ctrl');
  if (event.altKey) keys.push('alt');
  if (event.metaKey) keys.push('meta');
  if (event.shiftKey) keys.push('shift');
  keys.push(key);
  return { type: 'hotkey', keys };
}

/** Wheel deltas in pixels, whatever unit the device reported them in. */
export function wheelPixels(
  event: Pick<WheelEvent, 'deltaX' | 'deltaY' | 'deltaMode'>,
  page: Size,
) {
  const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? page.height : 1;
  return { dx: Math.round(event.deltaX * unit), dy: Math.round(event.deltaY * unit) };
}
