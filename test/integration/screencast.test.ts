import { request as httpRequest } from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader, type SseEvent } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let fixtures: FixtureServer;

const open = (id: string, query = '', key: string | null = server.key) =>
  SseReader.open(`${server.url}/computers/${id}/screencast${query}`, key);
const create = async (body: Record<string, unknown> = {}) =>
  (await server.request('POST', '/computers', body)).body.id as string;
const navigate = (id: string, url: string) =>
  server.request('POST', `/computers/${id}/navigate`, { url });
const solid = (color: string) =>
  `data:text/html,<body style="margin:0;background:${color}"></body>`;

type Frame = {
  image_data: string;
  metadata: { width: number; height: number; frame: number; tab_id: string | null };
};
const isFrame = (event: SseEvent | undefined) =>
  event !== undefined && event.event === undefined && 'image_data' in (event.data as object);

async function nextFrame(reader: SseReader): Promise<Frame> {
  for (;;) {
    const event = await reader.next();
    if (!event) throw new Error('the stream ended');
    if (isFrame(event)) return event.data as Frame;
  }
}

/** The colour at a point of a frame given as fractions of its size, decoded from its JPEG. */
async function colourAt(frame: Frame, at: [number, number]): Promise<[number, number, number]> {
  const jpeg = Buffer.from(frame.image_data, 'base64');
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  const offset =
    (Math.floor(info.height * at[1]) * info.width + Math.floor(info.width * at[0])) * info.channels;
  return [data[offset]!, data[offset + 1]!, data[offset + 2]!];
}
const centre = (frame: Frame) => colourAt(frame, [0.5, 0.5]);

beforeAll(async () => {
  [server, fixtures] = await Promise.all([
    // A short heartbeat, so the heartbeat test need not wait the real 15 s.
    startTestServer({}, { sse: { heartbeatMs: 200 } }),
    startFixtureServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});

describe('browser screencast', () => {
  it("keeps sending frames when the tab's document is replaced as the screencast starts", async () => {
    // Chromium sometimes sent the first frame of such a start and then none (about 1 start in
    // 3 here): a person who opened the live view as the page changed saw a still picture.
    for (let trial = 0; trial < 6; trial++) {
      const id = await create();
      const { page } = (
        server.core.computers.get('local', id).operator as unknown as {
          tabs: { page(): { page: import('playwright-core').Page } };
        }
      ).tabs.page();
      const reader = await open(id);
      await nextFrame(reader);
      await page.setContent('<body style="margin:0;background:rgb(0,0,0)"></body>');
      for (const [color, bright] of [
        ['rgb(255,255,255)', true],
        ['rgb(0,0,0)', false],
      ] as const) {
        await page.evaluate((value) => (document.body.style.background = value), color);
        await eventually(async () => {
          const [red] = await centre(await nextFrame(reader));
          return bright ? red > 200 : red < 50;
        }, 10_000);
      }
      reader.close();
      await server.request('DELETE', `/computers/${id}`);
    }
  });

  it('sends JPEG frames of the display size, and later frames show page changes', async () => {
    const id = await create();
    await navigate(id, solid('rgb(255,0,0)'));
    const reader = await open(id);
    expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await nextFrame(reader);
    const jpeg = Buffer.from(first.image_data, 'base64');
    expect((await sharp(jpeg).metadata()).format).toBe('jpeg');
    expect(first.metadata).toMatchObject({ width: 1280, height: 720 });
    expect(first.metadata.tab_id).toMatch(/^tab_/);
    const [r, g, b] = await centre(first);
    expect(r).toBeGreaterThan(200);
    expect(g + b).toBeLessThan(60);

    await navigate(id, solid('rgb(0,0,255)'));
    await eventually(async () => {
      const [red, , blue] = await centre(await nextFrame(reader));
      return blue > 200 && red < 60;
    });
    reader.close();
    await server.request('DELETE', `/computers/${id}`);
  });

  it('scales to max_width and keeps to the requested fps', async () => {
    const id = await create();
    await navigate(id, `${fixtures.url}/animated.html`);
    const reader = await open(id, '?fps=5&quality=40&max_width=640');
    const frames = (await reader.collect(2000)).filter(isFrame).map((event) => event.data as Frame);
    expect(frames[0]!.metadata).toMatchObject({ width: 640, height: 360 });
    expect(frames.length).toBeGreaterThanOrEqual(5);
    expect(frames.length).toBeLessThanOrEqual(12);
    reader.close();
    await server.request('DELETE', `/computers/${id}`);
  });

  it('shares one capture between viewers and stops it when the last one leaves', async () => {
    // Not recorded: the recorder would keep capturing after the last client left.
    const id = await create({ recording: false });
    await navigate(id, `${fixtures.url}/animated.html`);
    const { screencasts } = server.core;
    const one = await open(id);
    const two = await open(id);
    await nextFrame(one);
    await nextFrame(two);
    expect(screencasts.viewers(id)).toBe(2);
    one.close();
    await eventually(() => screencasts.viewers(id) === 1);
    await nextFrame(two);
    two.close();
    await eventually(() => screencasts.viewers(id) === 0 && !screencasts.capturing(id));
    await server.request('DELETE', `/computers/${id}`);
  });

  it('a client that never reads costs nothing: no backlog, the other client keeps getting frames', async () => {
    const id = await create();
    await navigate(id, `${fixtures.url}/animated.html`);
    // A client that opens the stream and never reads a byte.
    const stalled = httpRequest(`${server.url}/computers/${id}/screencast?fps=30&quality=100`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    stalled.on('response', (response) => response.pause());
    stalled.on('error', () => {});
    stalled.end();
    const reader = await open(id, '?fps=10');
    await nextFrame(reader);
    const before = process.memoryUsage().rss;
    // However slow the machine, the other client's frames keep coming while the stalled one's
    // unread bytes pile up (a fan-out that waited for the stalled client would hang here). How
    // fast they come is the bench's to measure.
    const first = await nextFrame(reader);
    let last = first;
    while (last.metadata.frame - first.metadata.frame < 60) last = await nextFrame(reader);
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown).toBeLessThan(40);
    stalled.destroy();
    reader.close();
    await eventually(() => server.core.screencasts.viewers(id) === 0);
    await server.request('DELETE', `/computers/${id}`);
  });

  it('ends with a status event when the computer ends, and answers 404 before any event', async () => {
    const id = await create();
    const reader = await open(id);
    await nextFrame(reader);
    await server.request('DELETE', `/computers/${id}`);
    const events = await reader.collect(3000);
    expect(events.at(-1)!.data).toMatchObject({
      type: 'status',
      status: 'terminated',
      termination_reason: 'deleted',
    });
    expect(reader.ended).toBe(true);

    const again = await open(id);
    expect((await again.collect(2000)).map((event) => event.data)).toEqual([
      expect.objectContaining({ type: 'status', termination_reason: 'deleted' }),
    ]);
    const unknown = await server.request('GET', '/computers/comp_unknown/screencast');
    expect(unknown.status).toBe(404);
    const other = server.core.keys.create('other').key;
    const mine = await create();
    const foreign = await server.request('GET', `/computers/${mine}/screencast`, undefined, {
      key: other,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'not_found' });
    await server.request('DELETE', `/computers/${mine}`);
    const bad = await server.request('GET', `/computers/${id}/screencast?fps=100`);
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe('fps');
  });
});

describe('desktop screencast', () => {
  it('grabs the display only while watched (or recorded) and sends cursor positions', async () => {
    const id = await create({
      kind: 'desktop',
      display: { width: 800, height: 600 },
      recording: false,
    });
    expect(server.core.screencasts.viewers(id)).toBe(0);
    const reader = await open(id, '?fps=10');
    const frame = await nextFrame(reader);
    expect(frame.metadata).toMatchObject({ width: 800, height: 600, tab_id: null });
    await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'move', x: 123, y: 45 },
    });
    await eventually(async () => {
      const event = await reader.next();
      return (
        event?.event === 'cursor_position' && JSON.stringify(event.data) === '{"x":123,"y":45}'
      );
    });
    reader.close();
    await eventually(
      () => server.core.screencasts.viewers(id) === 0 && !server.core.screencasts.capturing(id),
    );
    await server.request('DELETE', `/computers/${id}`);
  });

  it('sends what other programs draw and where they move the pointer; a still screen sends nothing', async () => {
    const id = await create({
      kind: 'desktop',
      display: { width: 800, height: 600 },
      recording: false,
    });
    const debug = async (command: string) => {
      const ran = await server.request('POST', `/computers/${id}/debug`, { command });
      expect(ran.body.result?.exit_code, ran.text).toBe(0);
    };
    const reader = await open(id, '?fps=10');
    await nextFrame(reader);
    // Once the terminal has drawn its prompt, a second passes without a frame.
    await eventually(async () => (await reader.collect(1000)).filter(isFrame).length === 0);
    // The root window, around the terminal, painted by another X client.
    await debug('xsetroot -solid rgb:00/c0/00');
    for (;;) {
      const [r, g, b] = await colourAt(await nextFrame(reader), [0.95, 0.95]);
      if (r < 40 && g > 150 && b < 40) break;
    }
    await debug('xdotool mousemove 321 234');
    await eventually(async () => {
      const event = await reader.next();
      return (
        event?.event === 'cursor_position' && JSON.stringify(event.data) === '{"x":321,"y":234}'
      );
    });
    reader.close();
    await server.request('DELETE', `/computers/${id}`);
  });
});

describe('heartbeats', () => {
  it('an idle stream gets heartbeat comments', async () => {
    const id = await create();
    await navigate(id, solid('white'));
    const reader = await open(id);
    await nextFrame(reader);
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    await eventually(() => reader.comments > 0 && events.comments > 0);
    reader.close();
    events.close();
    await server.request('DELETE', `/computers/${id}`);
  });
});
