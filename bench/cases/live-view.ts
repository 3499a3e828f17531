import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../../test/helpers/test-server.js';
import { launchUiBrowser, openUi } from '../../test/helpers/ui-browser.js';
import type { Bench } from '../bench.js';
import { benchLiveViewLatency } from './live-view-latency.js';
import { progress } from '../report.js';
import { round } from '../stats.js';

const NAME = 'live view fps in the UI, animated page';
const TARGET_FPS = 25;
const SECONDS = 3;
const BUILT_UI = join(import.meta.dirname, '..', '..', 'out', 'renderer', 'index.html');

/** The live view's canvas counts the frames it receives and draws. */
const frames = (page: Page, which: 'framesDrawn' | 'framesReceived') =>
  page
    .locator('.stage canvas')
    .evaluate((canvas, key) => Number((canvas as HTMLCanvasElement).dataset[key] ?? 0), which);

/**
 * The frame rate a person sees: the UI's live view of a computer showing an animated page, in a
 * Chromium of its own, counted as frames drawn on its canvas (raw = frames that arrived at it).
 * The UI is the built one (out/renderer), so `npm run build` must have run.
 */
export async function benchLiveView(bench: Bench): Promise<void> {
  const { server, client, fixtures, report } = bench;
  const target = `api ≥ ${TARGET_FPS} frames/s drawn (raw = frames received)`;
  if (!existsSync(BUILT_UI)) {
    report.add({
      name: NAME,
      api_p50_ms: null,
      raw_p50_ms: null,
      ratio: null,
      target,
      pass: false,
      samples: 0,
      note: 'the UI is not built: run `npm run build` first',
    });
    progress(`live view fps: the UI is not built (npm run build)`);
    return;
  }
  const { id } = await client.create();
  const browser = await launchUiBrowser();
  try {
    await client.request(
      'POST',
      `/computers/${id}/navigate`,
      { url: `${fixtures.url}/animated.html` },
      'action',
    );
    const ui = await openUi(browser, server, `#/computers/${id}`);
    await eventually(async () => (await frames(ui.page, 'framesDrawn')) >= 10, 10_000);
    const drawn = await frames(ui.page, 'framesDrawn');
    const received = await frames(ui.page, 'framesReceived');
    await sleep(SECONDS * 1000);
    const fps = ((await frames(ui.page, 'framesDrawn')) - drawn) / SECONDS;
    const arrived = ((await frames(ui.page, 'framesReceived')) - received) / SECONDS;
    await ui.close();
    report.add({
      name: NAME,
      api_p50_ms: null,
      raw_p50_ms: null,
      api_value: round(fps),
      raw_value: round(arrived),
      ratio: arrived ? round(fps / arrived) : null,
      target,
      pass: fps >= TARGET_FPS,
      samples: Math.round(fps * SECONDS),
    });
    progress(`live view fps: ${round(fps)} drawn of ${round(arrived)} received`);
    await latencyRows(bench, browser, id);
  } finally {
    await browser.close();
    await client.request('DELETE', `/computers/${id}`);
  }
}

/** Opening and input-to-photon in the UI, for the browser computer above and for a desktop. */
async function latencyRows(bench: Bench, browser: Browser, browserId: string): Promise<void> {
  const { server, client, fixtures, report } = bench;
  const colors = `${fixtures.url}/colors.html`;
  const ui = await openUi(browser, server);
  try {
    await client.request('POST', `/computers/${browserId}/navigate`, { url: colors }, 'action');
    await benchLiveViewLatency('browser', { ui, client, id: browserId, url: colors, report });
    const { id } = (await client.request('POST', '/computers', { kind: 'desktop' })) as {
      id: string;
    };
    try {
      // The desktop's own Chromium, a window filling its screen, shows the same page.
      await client.request('POST', `/computers/${id}/navigate`, { url: colors }, 'action');
      await benchLiveViewLatency('desktop', { ui, client, id, url: colors, report });
    } finally {
      await client.request('DELETE', `/computers/${id}`);
    }
  } finally {
    await ui.close();
  }
}
