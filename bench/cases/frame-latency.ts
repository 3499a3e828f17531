import { on, type EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { SseReader } from '../../test/helpers/sse.js';
import { rawContext, type Bench } from '../bench.js';

const ROUNDS = { warmup: 5, samples: 20 };
/** The screencast's default JPEG quality (the live view's too). */
const QUALITY = 70;

/** The next frame's JPEG, undefined when the source ended. */
type NextFrame = () => Promise<Buffer | undefined>;

/**
 * Milliseconds from a change on the page (its background black ↔ white) to the first frame that
 * shows it, decoded, as the frames come from `next`.
 */
async function latencies(page: Page, next: NextFrame): Promise<number[]> {
  await page.setContent('<body style="margin:0;background:rgb(0,0,0)"></body>');
  const times: number[] = [];
  for (let round = 0; round < ROUNDS.warmup + ROUNDS.samples; round++) {
    const bright = round % 2 === 0;
    const started = performance.now();
    await page.evaluate(
      (on) => (document.body.style.background = on ? 'rgb(255,255,255)' : 'rgb(0,0,0)'),
      bright,
    );
    for (;;) {
      const jpeg = await next();
      if (!jpeg) throw new Error('the screencast ended');
      const { data } = await sharp(jpeg).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
      if (bright ? data[0]! > 200 : data[0]! < 50) break;
    }
    if (round >= ROUNDS.warmup) times.push(performance.now() - started);
  }
  return times;
}

/**
 * Time from a change on the page to the first frame at the client that shows it, against
 * Chromium's own screencast of a page of the same size read straight over CDP: what Chromium
 * takes to draw, capture and encode a frame is the floor of every live view.
 */
export async function benchFrameLatency({ server, client, browser, report }: Bench): Promise<void> {
  const { id } = await client.create();
  const page = (
    server.core.computers.get('local', id).operator as unknown as {
      tabs: { page(): { page: Page } };
    }
  ).tabs.page().page;
  const reader = await SseReader.open(
    `${server.url}/computers/${id}/screencast?fps=30&quality=${QUALITY}`,
    server.key,
  );
  const raw = await rawContext(browser);
  try {
    await reader.next();
    const api = await latencies(page, async () => {
      for (;;) {
        const event = await reader.next(5000);
        if (!event) return undefined;
        if (event.event !== undefined) continue;
        return Buffer.from((event.data as { image_data: string }).image_data, 'base64');
      }
    });

    const cdp = await raw.context.newCDPSession(raw.page);
    // Acknowledged as they come, as the server does; read in order, each within 5 s.
    cdp.on('Page.screencastFrame', ({ sessionId }) => {
      void cdp.send('Page.screencastFrameAck', { sessionId }).catch(() => {});
    });
    const frames = on(cdp as unknown as EventEmitter, 'Page.screencastFrame');
    await cdp.send('Page.startScreencast', { format: 'jpeg', quality: QUALITY, everyNthFrame: 1 });
    const rawTimes = await latencies(raw.page, async () => {
      const next = await Promise.race([frames.next(), sleep(5000, undefined, { ref: false })]);
      if (!next) return undefined;
      const [{ data }] = (next as IteratorResult<[{ data: string }]>).value;
      return Buffer.from(data, 'base64');
    });
    await frames.return?.();
    await cdp.send('Page.stopScreencast');

    report.timing(
      'screencast frame latency (page change → frame at client)',
      { api, raw: rawTimes },
      { kind: 'absolute', maxMs: 100 },
      "raw = Chromium's own screencast of a raw page over CDP: its draw, capture and encoding, the floor of any live view",
    );
  } finally {
    reader.close();
    await raw.context.close();
    await client.request('DELETE', `/computers/${id}`);
  }
}
