import type { Page } from 'playwright-core';
import { eventually } from '../../test/helpers/test-server.js';
import type { UiPage } from '../../test/helpers/ui-browser.js';
import type { BenchClient } from '../client.js';
import type { Report } from '../report.js';

const OPEN_TARGET_MS = 150;
const PHOTON_TARGET_MS = 60;
const OPEN_ROUNDS = { warmup: 2, samples: 12 };
const PHOTON_ROUNDS = { warmup: 2, samples: 15 };
const TIMEOUT_MS = 10_000;

type Rgb = [number, number, number];
/** colors.html: white until a click paints it red. */
const RED: Rgb = [220, 0, 0];
const WHITE: Rgb = [255, 255, 255];

/**
 * Resolves, in the page, with the milliseconds from now until the live view's canvas has drawn a
 * frame whose centre shows `color` (any frame, with color undefined). Timed inside the UI's page,
 * so what is measured is what the person's screen shows, not when Playwright hears of it.
 */
function armDrawnFrame(
  page: Page,
  options: { color?: Rgb; from: 'now' | 'pointerdown'; timeoutMs: number },
): Promise<void> {
  return page.evaluate((options) => {
    const state = window as unknown as { drawnAfter?: Promise<number> };
    let started = performance.now();
    if (options.from === 'pointerdown') {
      addEventListener('pointerdown', () => (started = performance.now()), {
        capture: true,
        once: true,
      });
    }
    state.drawnAfter = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        observer.disconnect();
        reject(new Error(`no frame drawn within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      const observer = new MutationObserver((records) => {
        const now = performance.now();
        for (const record of records) {
          // Inline, not a named helper: tsx would name it with a function this page lacks.
          const canvas = record.target as HTMLCanvasElement;
          if (options.color) {
            const context = canvas.getContext('2d', { willReadFrequently: true })!;
            const [r, g, b] = context.getImageData(
              canvas.width >> 1,
              canvas.height >> 1,
              1,
              1,
            ).data;
            const [er, eg, eb] = options.color;
            if (Math.abs(r! - er) + Math.abs(g! - eg) + Math.abs(b! - eb) >= 60) continue;
          }
          clearTimeout(timer);
          observer.disconnect();
          resolve(now - started);
          return;
        }
      });
      observer.observe(document.body, {
        subtree: true,
        attributes: true,
        attributeFilter: ['data-frames-drawn'],
      });
    });
  }, options);
}

const drawnAfter = (page: Page) =>
  page.evaluate(() => (window as unknown as { drawnAfter: Promise<number> }).drawnAfter);

/**
 * Opening a computer in the UI (its live screen from the sessions list) until its first frame is
 * on the canvas: the computer fetched, the view laid out, the stream opened, the first frame
 * captured, encoded, sent, decoded and drawn.
 */
async function openToFirstFrame(ui: UiPage, id: string): Promise<number[]> {
  const { page } = ui;
  const times: number[] = [];
  for (let round = 0; round < OPEN_ROUNDS.warmup + OPEN_ROUNDS.samples; round++) {
    await page.evaluate(() => (location.hash = '#/'));
    await page.locator('.stage canvas').waitFor({ state: 'detached' });
    await armDrawnFrame(page, { from: 'now', timeoutMs: TIMEOUT_MS });
    await page.evaluate((hash) => (location.hash = hash), `#/computers/${id}`);
    const ms = await drawnAfter(page);
    if (round >= OPEN_ROUNDS.warmup) times.push(ms);
  }
  return times;
}

/**
 * A click on the live view until the canvas draws the page's reaction (colors.html turns red):
 * the UI's request, the action on the computer, the page repainting, the capture, encoding,
 * sending, decoding and drawing. Between rounds the page is loaded again (white), and that frame
 * is awaited on the canvas.
 */
async function inputToPhoton(
  ui: UiPage,
  client: BenchClient,
  id: string,
  url: string,
): Promise<number[]> {
  const { page } = ui;
  const canvas = page.locator('.stage canvas');
  await eventually(async () => Number((await canvas.getAttribute('data-frames-drawn')) ?? 0) > 0);
  const box = (await canvas.boundingBox())!;
  const times: number[] = [];
  for (let round = 0; round < PHOTON_ROUNDS.warmup + PHOTON_ROUNDS.samples; round++) {
    await armDrawnFrame(page, { color: WHITE, from: 'now', timeoutMs: TIMEOUT_MS });
    await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    await drawnAfter(page);
    await armDrawnFrame(page, { color: RED, from: 'pointerdown', timeoutMs: TIMEOUT_MS });
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const ms = await drawnAfter(page);
    if (round >= PHOTON_ROUNDS.warmup) times.push(ms);
  }
  return times;
}

/**
 * The two live-view rows for one computer, `url` being colors.html: opening it, and a click's
 * input-to-photon. `ui` is the UI on its sessions list.
 */
export async function benchLiveViewLatency(
  kind: 'browser' | 'desktop',
  {
    ui,
    client,
    id,
    url,
    report,
  }: { ui: UiPage; client: BenchClient; id: string; url: string; report: Report },
): Promise<void> {
  report.timing(
    `live view open → first frame drawn (${kind})`,
    { api: await openToFirstFrame(ui, id) },
    { kind: 'absolute', maxMs: OPEN_TARGET_MS },
  );
  report.timing(
    `live view click → reaction drawn (${kind})`,
    { api: await inputToPhoton(ui, client, id, url) },
    { kind: 'absolute', maxMs: PHOTON_TARGET_MS },
  );
}
