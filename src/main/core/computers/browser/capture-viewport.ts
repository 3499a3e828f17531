import { setTimeout as sleep } from 'node:timers/promises';
import type { CDPSession } from 'playwright-core';

/** Chromium's answer when the page has no frame to capture yet, and how often it is asked. */
const NO_FRAME = /Unable to capture screenshot/;
const NO_FRAME_TRIES = 4;
/** The wait before the second try, doubled before each next one (350 ms in all at most). */
const NO_FRAME_WAIT_MS = 50;

/**
 * The viewport as a PNG, straight from Chromium: encoded for speed (larger files, half the
 * encoding time) and without what Playwright's screenshot adds for stable test images (hiding the
 * caret in every element, waiting for fonts, four more round trips). An agent's step is mostly
 * its screenshot, and ten tasks at once share what it costs Chromium: at 1280×720 on a two-core
 * VM, about 180 → 100 ms of CPU on a busy page (a canvas full of colour and text), 90 → 80 on a
 * mostly white one, where copying the frame out of the GPU process is most of it. In CSS pixels
 * at any device scale: the page's own CDP session emulates nothing, so Chromium captures the view
 * at its size in CSS pixels (a session that emulates the device, as Playwright's does, would
 * capture device pixels).
 *
 * A page loaded a moment ago on a busy machine may not have drawn its first frame yet, and
 * Chromium then has nothing to capture ("Unable to capture screenshot", about 1 in 100 right after
 * a navigate with the cores busy): it is asked again a few frames later. The wait is here, not in
 * the page, so nothing the page runs can hold it up or notice it.
 */
export async function captureViewport(cdp: Pick<CDPSession, 'send'>): Promise<Buffer> {
  for (let tries = 1; ; tries++) {
    try {
      const { data } = await cdp.send('Page.captureScreenshot', {
        format: 'png',
        optimizeForSpeed: true,
      });
      return Buffer.from(data, 'base64');
    } catch (error) {
      if (tries >= NO_FRAME_TRIES || !NO_FRAME.test((error as Error).message)) throw error;
      await sleep(NO_FRAME_WAIT_MS * 2 ** (tries - 1));
    }
  }
}
