import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { SseReader } from '../../test/helpers/sse.js';
import type { Bench } from '../bench.js';

/** Time from a change on the page to the first frame at the client that shows it. */
export async function benchFrameLatency({ server, client, report }: Bench): Promise<void> {
  const { id } = await client.create();
  const page = (
    server.core.computers.get('local', id).operator as unknown as {
      tabs: { page(): { page: Page } };
    }
  ).tabs.page().page;
  await page.setContent('<body style="margin:0;background:rgb(0,0,0)"></body>');
  const reader = await SseReader.open(
    `${server.url}/computers/${id}/screencast?fps=30`,
    server.key,
  );
  const latencies: number[] = [];
  try {
    await reader.next();
    for (let round = 0; round < 25; round++) {
      const bright = round % 2 === 0;
      const started = performance.now();
      await page.evaluate(
        (on) => (document.body.style.background = on ? 'rgb(255,255,255)' : 'rgb(0,0,0)'),
        bright,
      );
      for (;;) {
        const event = await reader.next(5000);
        if (!event) throw new Error('the screencast ended');
        if (event.event !== undefined) continue;
        const jpeg = Buffer.from((event.data as { image_data: string }).image_data, 'base64');
        const { data } = await sharp(jpeg).resize(1, 1).raw().toBuffer({ resolveWithObject: true });
        if (bright ? data[0]! > 200 : data[0]! < 50) break;
      }
      if (round >= 5) latencies.push(performance.now() - started);
    }
    report.timing(
      'screencast frame latency (page change → frame at client)',
      { api: latencies },
      { kind: 'absolute', maxMs: 100 },
    );
  } finally {
    reader.close();
    await client.request('DELETE', `/computers/${id}`);
  }
}
