import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import type { FrameEvent } from '../../src/main/core/screencast/screencast-hub.js';
import { SseReader } from '../../test/helpers/sse.js';
import { VIEWPORT, type Bench } from '../bench.js';
import { ownTicks } from '../proc.js';
import { progress } from '../report.js';
import { round } from '../stats.js';

/** Frames a screencast client receives in `ms` (each data event with image_data). */
async function countFrames(readers: SseReader[], ms: number): Promise<number[]> {
  const events = await Promise.all(readers.map((reader) => reader.collect(ms)));
  return events.map((list) => list.filter((event) => event.event === undefined).length);
}

/** The frames (data events with image_data) a client receives in `ms`, with their timestamps. */
async function framesIn(reader: SseReader, ms: number): Promise<number[]> {
  const events = await reader.collect(ms);
  return events
    .filter((event) => event.event === undefined)
    .map((event) => Date.parse((event.data as FrameEvent).metadata.timestamp));
}

/** Frames per second between the first and the last of these frame times. */
function frameRate(times: number[]): number {
  if (times.length < 2) return 0;
  return (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
}

/**
 * Screencast (issue 4): frame rate of one client on an animated page against a raw CDP
 * screencast of a raw page, and CPU of four clients against one.
 */
export async function benchScreencast(bench: Bench): Promise<void> {
  const { server, client, browser, fixtures, report } = bench;
  const { id } = await client.create();
  await client.request(
    'POST',
    `/computers/${id}/navigate`,
    { url: `${fixtures.url}/animated.html` },
    'action',
  );
  const open = () =>
    SseReader.open(`${server.url}/computers/${id}/screencast?fps=30&quality=70`, server.key);
  try {
    const one = await open();
    await one.next();
    const apiFrames = await framesIn(one, 3000);
    const apiFps = frameRate(apiFrames);
    const rawFps = await rawScreencastFps(browser, `${fixtures.url}/animated.html`);
    report.add({
      name: 'screencast fps, one client, animated 1280×720',
      api_p50_ms: null,
      raw_p50_ms: null,
      api_value: round(apiFps),
      raw_value: round(rawFps),
      ratio: round(apiFps / rawFps),
      // The client asks for 30/s: a count over a fixed 3 s window says 89 or 90 by where the
      // window falls, so the rate is taken between the first and last frame's timestamps.
      target: 'api ≥ 29.5 frames/s, asking for 30 (raw = CDP screencast, uncapped)',
      pass: apiFps >= 29.5,
      samples: apiFrames.length,
    });
    progress(`screencast fps: api ${round(apiFps)}, raw ${round(rawFps)}`);

    const cpuOf = async (readers: SseReader[]) => {
      const before = ownTicks();
      await countFrames(readers, 3000);
      return ownTicks() - before;
    };
    const cpuOne = await cpuOf([one]);
    const others = [await open(), await open(), await open()];
    await Promise.all(others.map((reader) => reader.next()));
    const cpuFour = await cpuOf([one, ...others]);
    for (const reader of [one, ...others]) reader.close();
    report.add({
      name: 'screencast CPU, four clients vs one',
      api_p50_ms: null,
      raw_p50_ms: null,
      api_value: cpuFour,
      raw_value: cpuOne,
      ratio: round(cpuFour / cpuOne),
      target: 'four ≤ 1.3 × one (CPU ticks, whole process tree)',
      pass: cpuFour <= cpuOne * 1.3,
      samples: 2,
    });
    progress(`screencast CPU: four ${cpuFour} ticks, one ${cpuOne} ticks`);
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}

/** Frames per second a raw CDP screencast of the same page delivers, acked at once. */
async function rawScreencastFps(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    const page = await context.newPage();
    await page.goto(url);
    const session = await context.newCDPSession(page);
    let frames = 0;
    session.on('Page.screencastFrame', ({ sessionId }) => {
      frames += 1;
      void session.send('Page.screencastFrameAck', { sessionId }).catch(() => {});
    });
    await session.send('Page.startScreencast', { format: 'jpeg', quality: 70 });
    await sleep(500);
    frames = 0;
    await sleep(3000);
    await session.send('Page.stopScreencast');
    return frames / 3;
  } finally {
    await context.close();
  }
}
