import type {
  CoordinateSpace,
  InputItem,
  OutputAction,
  OutputItem,
  ResponseObject,
  ResponseStreamEvent,
  Tool,
  Viewport,
} from '../../../shared/responses.js';
import { computerToolOf } from './model-provider.js';

/**
 * How one client reads the Responses API. Benchtop keeps every response in one form (pixels, ISO
 * timestamps, the contract's action shapes) and shows it to each client in its own:
 *
 * - `typed`: the Lightcone SDKs with typed Responses models (Python 2.35.0 and TypeScript 0.10.0
 *   onwards) parse `created_at` as an integer and a computer_call's action as one of a closed set
 *   of typed actions; anything else falls back to an untyped dict. They get integer `created_at`
 *   and the typed shapes wherever one exists (a drag as `path`, a right click as a click with
 *   `button: "right"`, keys always as `keys`).
 * - `coordinates`: `model` puts the point fields in 0–999, which those SDKs' examples convert
 *   themselves with int(v / 1000 × display); `pixels` leaves them as they are.
 */
export type ClientDialect = { typed: boolean; coordinates: CoordinateSpace };

/** What plain HTTP and the older SDKs read: the contract's own shapes, in pixels. */
export const CONTRACT_DIALECT: ClientDialect = { typed: false, coordinates: 'pixels' };

/** The client's dialect: the request's explicit coordinate_space wins over what its SDK implies. */
export function dialectFor(typedSdk: boolean, tools: readonly unknown[] = []): ClientDialect {
  const chosen = tools.find(
    (tool): tool is { coordinate_space: CoordinateSpace } =>
      typeof tool === 'object' && tool !== null && 'coordinate_space' in tool,
  )?.coordinate_space;
  return { typed: typedSdk, coordinates: chosen ?? (typedSdk ? 'model' : 'pixels') };
}

type Display = Pick<Viewport, 'width' | 'height'>;

/** The fields the current examples convert from 0–999; a drag's path and scroll amounts they pass on. */
const POINT_FIELDS = {
  x: 'width',
  y: 'height',
  x1: 'width',
  y1: 'height',
  x2: 'width',
  y2: 'height',
  end_x: 'width',
  end_y: 'height',
} as const;

/** The pixel a client lands on from 0–999, as the current examples compute it. */
export function fromModelSpace(value: number, size: number): number {
  return Math.trunc((value / 1000) * size);
}

/**
 * The 0–999 value whose conversion int(v / 1000 × size) is exactly `pixel`. On displays wider or
 * taller than 1000 px some pixels have no such value (1000 steps cannot name 1280 pixels): then the
 * nearest pixel that has one, less than one step (size / 1000 px) away — one pixel at 1280.
 */
export function toModelSpace(pixel: number, size: number): number {
  const target = Math.min(Math.max(Math.round(pixel), 0), size - 1);
  const guess = Math.ceil((target * 1000) / size);
  let best = 0;
  let bestMiss = Infinity;
  // Floating point can put the exact value one either side of the guess.
  for (let value = Math.max(0, guess - 2); value <= Math.min(999, guess + 2); value++) {
    const miss = Math.abs(fromModelSpace(value, size) - target);
    if (miss < bestMiss) [best, bestMiss] = [value, miss];
  }
  return best;
}

function convertPoints(
  action: Record<string, unknown>,
  display: Display,
  convert: (value: number, size: number) => number,
): Record<string, unknown> {
  const out = { ...action };
  for (const [field, dimension] of Object.entries(POINT_FIELDS)) {
    const value = out[field];
    if (typeof value === 'number') out[field] = convert(value, display[dimension]);
  }
  return out;
}

/** The typed SDKs know a middle click as "wheel". */
const TYPED_BUTTONS: Record<string, string> = { middle: 'wheel' };

/** A contract action in the shape the typed SDKs parse, where they have one; pixels still. */
function typedAction(action: OutputAction, display: Display | null): Record<string, unknown> {
  const { type, x, y } = action;
  switch (type) {
    case 'click':
      return { type, x, y, button: TYPED_BUTTONS[action.button ?? 'left'] ?? action.button };
    case 'right_click':
      return { type: 'click', x, y, button: 'right' };
    case 'double_click':
    case 'move':
    case 'mouse_down':
    case 'mouse_up':
      return { type, x, y };
    case 'drag':
      return {
        type,
        path: [
          { x, y },
          { x: action.end_x, y: action.end_y },
        ],
      };
    case 'type':
      return x !== undefined && y !== undefined
        ? { type: 'point_and_type', x, y, text: action.text }
        : { type, text: action.text };
    case 'key':
    case 'keypress':
      return { type: 'keypress', keys: keysOf(action) };
    case 'key_down':
    case 'key_up':
      return { type, keys: keysOf(action) };
    case 'scroll':
    case 'hscroll':
      return {
        type: 'scroll',
        // The SDKs' scroll needs a point: the middle of the screen, as the models mean it.
        x: x ?? Math.floor((display?.width ?? 0) / 2),
        y: y ?? Math.floor((display?.height ?? 0) / 2),
        scroll_x: action.scroll_x ?? 0,
        scroll_y: type === 'hscroll' ? 0 : (action.scroll_y ?? 0),
      };
    default:
      // triple_click, navigate, wait, terminate, answer, done: the SDKs have no typed model for
      // these (wait's is typeless and takes `ms` along), so the contract's shape is the best one.
      return { ...action };
  }
}

function keysOf(action: OutputAction): string[] {
  return action.keys ?? (action.text ? [action.text] : []);
}

function presentItem(item: OutputItem, display: Display | null, dialect: ClientDialect) {
  if (item.type !== 'computer_call') return item;
  // The typed shapes do not depend on a display; 0–999 is relative to one, so without a
  // computer tool the points stay pixels.
  let action: Record<string, unknown> = dialect.typed
    ? typedAction(item.action, display)
    : { ...item.action };
  if (dialect.coordinates === 'model' && display) {
    action = convertPoints(action, display, toModelSpace);
  }
  return { ...item, action };
}

/** A response as the client reads it. */
export type ClientResponse = Omit<ResponseObject, 'created_at' | 'output'> & {
  created_at: string | number;
  output: Array<OutputItem | (Omit<OutputItem, 'action'> & { action: Record<string, unknown> })>;
};

export function presentResponse(response: ResponseObject, dialect: ClientDialect): ClientResponse {
  return {
    ...response,
    created_at: dialect.typed
      ? Math.floor(Date.parse(response.created_at) / 1000)
      : response.created_at,
    output: response.output.map((item) => presentItem(item, response.viewport, dialect)),
  };
}

/** A stream event as the client reads it; `display` is the request's computer tool's. */
export function presentEvent(
  event: ResponseStreamEvent,
  dialect: ClientDialect,
  display: Display | null,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...event };
  if (event.response) out.response = presentResponse(event.response, dialect);
  if (event.item) out.item = presentItem(event.item, display, dialect);
  return out;
}

/**
 * The request as Benchtop keeps it: computer_calls a client sends back are turned into the
 * contract's shape, and from 0–999 into the pixels the client's conversion gave (what it then
 * performed). A typed drag's path was pixels all along.
 */
export function readRequest<B extends { input: string | InputItem[]; tools?: Tool[] }>(
  body: B,
  dialect: ClientDialect,
): B {
  if (typeof body.input === 'string') return body;
  const display = computerToolOf(body.tools);
  const input = body.input.map((item) => {
    if (item.type !== 'computer_call') return item;
    const inPixels =
      dialect.coordinates === 'model' && display
        ? convertPoints(item.action, display, fromModelSpace)
        : item.action;
    return { ...item, action: contractAction(inPixels) as typeof item.action };
  });
  return { ...body, input };
}

/** The typed SDKs' shapes back in the contract's (the inverse of typedAction). */
function contractAction(action: Record<string, unknown>): Record<string, unknown> {
  const { path, ...rest } = action;
  if (action.type === 'drag' && Array.isArray(path) && path.length >= 2 && rest.x === undefined) {
    const [first, last] = [
      path[0] as Record<string, unknown>,
      path.at(-1) as Record<string, unknown>,
    ];
    return { ...rest, x: first.x, y: first.y, end_x: last.x, end_y: last.y };
  }
  if (action.type === 'point_and_type') return { ...action, type: 'type' };
  if (action.type === 'click' && action.button === 'wheel') return { ...action, button: 'middle' };
  return action;
}
