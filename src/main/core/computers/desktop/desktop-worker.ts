/**
 * A desktop worker: one process per virtual display, because nut-js binds to the X display of
 * its process. It answers requests from the main process over a Unix socket (worker-channel.ts).
 */
import { connect } from 'node:net';
import { Button, Key, keyboard, Point, providerRegistry, screen } from '@nut-tree-fork/nut-js';
import type { Sharp } from 'sharp';
import type {
  WorkerAnswer,
  WorkerButton,
  WorkerMessage,
  WorkerRequest,
} from './desktop-protocol.js';
import { onMessages, sendMessage } from './worker-channel.js';
import { watchScreenChanges, type ScreenChanges } from './screen-changes.js';
import { connectWindowManagerSync, type WindowManagerSync } from './window-manager-sync.js';

/**
 * Loaded at the first image: libvips is a good part of what the worker would hold otherwise, and
 * a desktop nobody watches, records or screenshots never needs it.
 */
let sharpModule: Promise<typeof import('sharp')> | undefined;
const loadSharp = () =>
  (sharpModule ??= import('sharp').then((module) => {
    // One image at a time, never the same one twice: libvips's cache of operations and its
    // threads' memory pools would only hold tens of megabytes for as long as the desktop runs.
    module.default.cache(false);
    module.default.concurrency(1);
    return module;
  }));

keyboard.config.autoDelayMs = 0;
/**
 * Input goes straight to nut-js's providers (libnut): its mouse and keyboard classes wait a timer
 * before each press, click or release even with no delay configured, which is a millisecond at
 * least (a click through them took 1.7 ms, through the provider 0.4).
 */
const pointer = providerRegistry.getMouse();
const keyboardInput = providerRegistry.getKeyboard();

const BUTTONS: Record<WorkerButton, Button> = {
  left: Button.LEFT,
  right: Button.RIGHT,
  middle: Button.MIDDLE,
};
/** Pixels per wheel notch: X11 scrolls in notches, the API in pixels. */
const PIXELS_PER_NOTCH = 100;
const DRAG_STEPS = 10;

const toKey = (name: string): Key => {
  const key = Key[name as keyof typeof Key];
  if (key === undefined) throw new Error(`no key ${name}`);
  return key;
};

async function perform(request: WorkerRequest): Promise<unknown> {
  switch (request.op) {
    case 'click':
      await pointer.setMousePosition(new Point(request.at.x, request.at.y));
      for (let n = 0; n < request.count; n++) await pointer.click(BUTTONS[request.button]);
      return null;
    case 'press': {
      await pointer.setMousePosition(new Point(request.at.x, request.at.y));
      const button = BUTTONS[request.button];
      await (request.down ? pointer.pressButton(button) : pointer.releaseButton(button));
      return null;
    }
    case 'move':
      await pointer.setMousePosition(new Point(request.at.x, request.at.y));
      return null;
    case 'drag':
      return drag(request.path);
    case 'scroll':
      return scroll(request.at, request.dx, request.dy);
    case 'keys':
      return keys(request.keys.map(toKey), request.mode);
    case 'type':
      // Only where xdotool is not available (host mode off X11): nut-js types what it can.
      await keyboard.type(request.text);
      return null;
    case 'screenshot':
      return screenshot();
    case 'frame':
      return frame(request.quality, request.maxWidth, request.ifChanged ?? false);
    case 'changes': {
      const changes = await watchScreen();
      const changed = changes ? await changes.wait(request.waitMs) : true;
      const { x, y } = await pointer.currentMousePosition();
      return { changed, cursor: { x, y } };
    }
    case 'wake':
      (await screenChanges)?.poke();
      return null;
    case 'size':
      return { width: await screen.width(), height: await screen.height() };
    case 'cursor': {
      const { x, y } = await pointer.currentMousePosition();
      return { x, y };
    }
    case 'xauthority':
      // libX11 reads the variable at each connection.
      process.env.XAUTHORITY = request.path;
      return null;
    case 'window-manager':
      return (await (await connectWindowManager())?.started(request.waitMs)) ?? false;
  }
}

async function drag(path: Array<{ x: number; y: number }>): Promise<null> {
  const [first, ...rest] = path;
  await pointer.setMousePosition(new Point(first!.x, first!.y));
  await pointer.pressButton(Button.LEFT);
  let from = first!;
  for (const to of rest) {
    const steps = path.length === 2 ? DRAG_STEPS : 1;
    for (let step = 1; step <= steps; step++) {
      const x = from.x + ((to.x - from.x) * step) / steps;
      const y = from.y + ((to.y - from.y) * step) / steps;
      await pointer.setMousePosition(new Point(Math.round(x), Math.round(y)));
    }
    from = to;
  }
  await pointer.releaseButton(Button.LEFT);
  return null;
}

async function scroll(at: { x: number; y: number }, dx: number, dy: number): Promise<null> {
  await pointer.setMousePosition(new Point(at.x, at.y));
  const notches = (pixels: number) =>
    pixels === 0 ? 0 : Math.max(1, Math.round(Math.abs(pixels) / PIXELS_PER_NOTCH));
  if (dy > 0) await pointer.scrollDown(notches(dy));
  if (dy < 0) await pointer.scrollUp(notches(dy));
  if (dx > 0) await pointer.scrollRight(notches(dx));
  if (dx < 0) await pointer.scrollLeft(notches(dx));
  return null;
}

async function keys(list: Key[], mode: 'tap' | 'down' | 'up'): Promise<null> {
  if (mode !== 'up') await keyboardInput.pressKey(...list);
  if (mode !== 'down') await keyboardInput.releaseKey(...[...list].reverse());
  return null;
}

/**
 * The grab as 3-channel RGB. grab() gives BGRA with alpha 0, and libvips premultiplies by alpha
 * during a resize whatever order sharp's calls come in, which blackens all but antialiased text:
 * alpha must be gone before sharp sees the pixels. Done in JavaScript because it is the fastest
 * way measured (about 2 ms for 1280×720, where a libvips recomb costs about 9 ms).
 */
async function rgbOf(image: { data: Buffer; width: number; height: number }): Promise<Sharp> {
  const { default: sharp } = await loadSharp();
  const { data, width, height } = image;
  const rgb = Buffer.allocUnsafe(width * height * 3);
  for (let from = 0, to = 0; from < data.length; from += 4, to += 3) {
    rgb[to] = data[from + 2]!;
    rgb[to + 1] = data[from + 1]!;
    rgb[to + 2] = data[from]!;
  }
  return sharp(rgb, { raw: { width, height, channels: 3 } });
}

/** PNG of the whole display. */
async function screenshot(): Promise<{ png: Buffer; width: number; height: number }> {
  const image = await screen.grab();
  const png = await (await rgbOf(image)).png({ compressionLevel: 1 }).toBuffer();
  collectGrabs();
  return { png, width: image.width, height: image.height };
}

const gc = (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc;

/**
 * Frees the grabs no longer used, at once. Each grab is a new 3.7 MB buffer (1280×720 BGRA, plus
 * its RGB copy) outside V8's heap, which V8 collects only when its young objects fill or such
 * outside memory has grown by 64 MB: a recorded idle desktop's worker grew from 35 to ~100 MB
 * between collections. A young-generation collection after each takes well under a millisecond
 * (the worker's heap is small) and keeps it near its floor; allocating the next grab in pages
 * just freed is also faster than in new ones.
 */
function collectGrabs(): void {
  gc?.({ type: 'minor' });
}

/**
 * Watched from the first frame: a desktop nobody watches, records or screenshots never needs it.
 * Without it (no X display: host mode on macOS or Windows; no DAMAGE extension) every `changes`
 * answers at once, and frames are grabbed at the capture's rate as they would be otherwise.
 */
let screenChanges: Promise<ScreenChanges | undefined> | undefined;
const watchScreen = () => {
  const display = process.env.DISPLAY;
  screenChanges ??= display
    ? watchScreenChanges(display).catch(() => undefined)
    : Promise.resolve(undefined);
  return screenChanges;
};

/** The pixels and options of the last frame encoded, to skip encoding an unchanged screen. */
let previous: { data: Buffer; quality: number; maxWidth: number | undefined } | undefined;

/**
 * A screencast frame: JPEG, scaled down to maxWidth, with where the pointer is. With `ifChanged`,
 * a screen identical to the previous frame's is not encoded again (`jpeg: null`): comparing the
 * pixels costs a fraction of a millisecond, encoding ten (the X server reports a window drawn
 * again the same as a change).
 */
async function frame(
  quality: number,
  maxWidth: number | undefined,
  ifChanged: boolean,
): Promise<{
  jpeg: Buffer | null;
  width: number;
  height: number;
  cursor: { x: number; y: number };
}> {
  await (await watchScreen())?.take();
  const [image, cursor] = await Promise.all([screen.grab(), pointer.currentMousePosition()]);
  const same =
    previous !== undefined &&
    previous.quality === quality &&
    previous.maxWidth === maxWidth &&
    previous.data.equals(image.data);
  previous = { data: image.data, quality, maxWidth };
  if (same && ifChanged) {
    collectGrabs();
    return { jpeg: null, width: 0, height: 0, cursor: { x: cursor.x, y: cursor.y } };
  }
  let width = image.width;
  let height = image.height;
  let pipeline = await rgbOf(image);
  if (maxWidth && maxWidth < width) {
    height = Math.round((height * maxWidth) / width);
    width = maxWidth;
    pipeline = pipeline.resize(width, height);
  }
  // Without optimised Huffman tables: a second pass over the picture that made encoding a
  // 1280×720 screen take 7–11 ms instead of 4.5 for 10 % fewer bytes, on the way to a person
  // watching (a live view click → its reaction drawn waited for it).
  const jpeg = await pipeline.jpeg({ quality, optimiseCoding: false }).toBuffer();
  collectGrabs();
  return { jpeg, width, height, cursor: { x: cursor.x, y: cursor.y } };
}

/** The ops that send input to the X server. */
const INPUT_OPS = new Set<WorkerRequest['op']>([
  'click',
  'press',
  'move',
  'drag',
  'scroll',
  'keys',
  'type',
]);

/**
 * Connected when a virtual desktop starts (to see its window manager start), otherwise at the
 * first input (host mode). Without it (no X display: host mode on macOS or Windows; or the
 * display refuses a second connection) input is answered as before, only without the wait below.
 */
let windowManager: Promise<WindowManagerSync | undefined> | undefined;
const connectWindowManager = () => {
  const display = process.env.DISPLAY;
  windowManager ??= display
    ? connectWindowManagerSync(display).catch(() => undefined)
    : Promise.resolve(undefined);
  return windowManager;
};

/**
 * Answered only once the X server and the window manager have taken an input op's events: a
 * round trip on this connection (XQueryPointer), so the X server has processed them, then one
 * through the window manager (see window-manager-sync.ts), so a click has focused its window and
 * reached it. Input that another X client sends next (xdotool types text) cannot overtake them.
 */
async function performed(request: WorkerRequest): Promise<unknown> {
  const result = await perform(request);
  if (INPUT_OPS.has(request.op)) {
    await pointer.currentMousePosition();
    await (await connectWindowManager())?.roundTrip();
    // The pointer may have moved: a live view waiting for changes hears of it now.
    void screenChanges?.then((changes) => changes?.poke());
  }
  return result;
}

// The server listens on the socket named by the last argument; the worker's messages go there.
const channel = connect(process.argv.at(-1)!);
const answer = (message: WorkerAnswer) => sendMessage(channel, message);
onMessages(channel, (message) => {
  const { id, request } = message as WorkerMessage;
  performed(request).then(
    (result) => answer({ id, ok: true, result }),
    (error: unknown) =>
      answer({ id, ok: false, error: String((error as Error)?.message ?? error) }),
  );
});
// The server going away ends the worker: it must never outlive its computer.
channel.on('close', () => process.exit(0));
channel.on('error', () => {});
channel.once('connect', () => answer({ id: 0, ok: true, result: 'ready' }));
