import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { settledPixels } from '../helpers/desktop.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A screencast asked for at a max_width below the display's must show what the full-size one shows,
 * only smaller. Desktop frames once came out black but for antialiased text when scaled.
 */

let server: TestServer;
const created: string[] = [];

const DISPLAY = { width: 1280, height: 720 };
const SCALED = { width: 640, height: 360 };
/** JPEG at the default quality and two different scalers leave a few levels of difference. */
const MAX_MEAN_DIFFERENCE = 10;

type Rgb = [number, number, number];
type Picture = { data: Buffer; width: number; height: number };
type Frame = { image_data: string; metadata: { width: number; height: number } };

const create = async (body: Record<string, unknown>) => {
  const response = await server.request('POST', '/computers', body);
  expect(response.status, response.text).toBe(200);
  created.push(response.body.id as string);
  return response.body.id as string;
};

/** The first frame a new viewer gets, decoded; the viewer leaves before the next one watches. */
async function firstFrame(id: string, query: string): Promise<{ frame: Frame; picture: Picture }> {
  const reader = await SseReader.open(
    `${server.url}/computers/${id}/screencast${query}`,
    server.key,
  );
  try {
    for (;;) {
      const event = await reader.next();
      if (!event) throw new Error('the stream ended before a frame');
      if (event.event !== undefined || !('image_data' in (event.data as object))) continue;
      const frame = event.data as Frame;
      return { frame, picture: await decode(frame, undefined) };
    }
  } finally {
    reader.close();
    // Viewers share one capture at the widest size any of them asked for: let this one end first.
    await eventually(() => server.core.screencasts.viewers(id) === 0);
  }
}

async function decode(frame: Frame, size: typeof SCALED | undefined): Promise<Picture> {
  let image = sharp(Buffer.from(frame.image_data, 'base64'));
  if (size) image = image.resize(size.width, size.height);
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(3);
  return { data, width: info.width, height: info.height };
}

const meanDifference = (a: Picture, b: Picture) => {
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  return sum / a.data.length;
};

const brightness = (picture: Picture, pixel: number) =>
  picture.data[pixel * 3]! + picture.data[pixel * 3 + 1]! + picture.data[pixel * 3 + 2]!;

/** Of the pixels that are not dark in the reference, the share that the other picture has dark. */
function darkWhereLit(reference: Picture, other: Picture): { lit: number; darkened: number } {
  const pixels = reference.width * reference.height;
  let lit = 0;
  let darkened = 0;
  for (let pixel = 0; pixel < pixels; pixel++) {
    if (brightness(reference, pixel) < 150) continue;
    lit++;
    if (brightness(other, pixel) < 60) darkened++;
  }
  return { lit: lit / pixels, darkened: darkened / Math.max(lit, 1) };
}

/** The colour at a point given as fractions of the width and height. */
function colourAt(picture: Picture, x: number, y: number): Rgb {
  const offset =
    (Math.floor(y * picture.height) * picture.width + Math.floor(x * picture.width)) * 3;
  return [picture.data[offset]!, picture.data[offset + 1]!, picture.data[offset + 2]!];
}

const closeTo = (actual: Rgb, expected: Rgb) =>
  actual.every((channel, index) => Math.abs(channel - expected[index]!) <= 24);

/** Scales the full-size frame down itself and checks the server's scaled frame against it. */
async function expectSameAsFullSize(id: string, known: Array<{ at: [number, number]; rgb: Rgb }>) {
  const full = await firstFrame(id, '');
  const scaled = await firstFrame(id, `?max_width=${SCALED.width}`);
  expect(full.frame.metadata).toMatchObject(DISPLAY);
  expect(scaled.frame.metadata).toMatchObject(SCALED);
  expect({ width: scaled.picture.width, height: scaled.picture.height }).toEqual(SCALED);

  const reference = await decode(full.frame, SCALED);
  const { lit, darkened } = darkWhereLit(reference, scaled.picture);
  // Most of the screen is bright, so a frame gone black cannot pass for a faithful one.
  expect(lit).toBeGreaterThan(0.5);
  expect(darkened).toBeLessThan(0.01);
  expect(meanDifference(reference, scaled.picture)).toBeLessThan(MAX_MEAN_DIFFERENCE);
  for (const { at, rgb } of known) {
    expect(closeTo(colourAt(full.picture, ...at), rgb), `full frame at ${at.join()}`).toBe(true);
    expect(closeTo(colourAt(scaled.picture, ...at), rgb), `scaled frame at ${at.join()}`).toBe(
      true,
    );
  }
}

beforeAll(async () => {
  server = await startTestServer({ browser: { warm_pool: 0 } });
});
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => server.request('DELETE', `/computers/${id}`)));
});
afterAll(async () => {
  await server?.close();
});

describe('scaled screencast frames', () => {
  it('a browser frame at max_width shows the full-size frame, smaller', async () => {
    const id = await create({ display: DISPLAY });
    const quadrants: Rgb[] = [
      [220, 40, 40],
      [40, 170, 60],
      [40, 80, 220],
      [240, 200, 40],
    ];
    const page =
      'data:text/html,<body style="margin:0;display:grid;grid-template:1fr 1fr/1fr 1fr;height:100vh">' +
      quadrants.map(([r, g, b]) => `<div style="background:rgb(${r},${g},${b})"></div>`).join('');
    const navigated = await server.request('POST', `/computers/${id}/navigate`, { url: page });
    expect(navigated.status, navigated.text).toBe(200);
    await expectSameAsFullSize(id, [
      { at: [0.25, 0.25], rgb: quadrants[0]! },
      { at: [0.75, 0.25], rgb: quadrants[1]! },
      { at: [0.25, 0.75], rgb: quadrants[2]! },
      { at: [0.75, 0.75], rgb: quadrants[3]! },
    ]);
  });

  it('a desktop frame at max_width shows the full-size frame, smaller', async () => {
    const id = await create({ kind: 'desktop', display: DISPLAY });
    // A coloured root window around the white terminal: large areas of known, non-black colours.
    const root: Rgb = [42, 127, 212];
    const colour = root.map((channel) => channel.toString(16).padStart(2, '0')).join('/');
    const debug = await server.request('POST', `/computers/${id}/debug`, {
      command: `xsetroot -solid rgb:${colour}`,
    });
    expect(debug.body.result.exit_code, debug.text).toBe(0);
    await settledPixels(server, id);
    await expectSameAsFullSize(id, [{ at: [0.95, 0.95], rgb: root }]);
  });
});
