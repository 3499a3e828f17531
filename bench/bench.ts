import type { Browser } from 'playwright-core';
import type { FixtureServer } from '../test/helpers/fixture-server.js';
import type { TestServer } from '../test/helpers/test-server.js';
import type { BenchClient } from './client.js';
import type { Report } from './report.js';

/** What every case is given: the server and its client, the same Chromium raw, the report. */
export type Bench = {
  server: TestServer;
  fixtures: FixtureServer;
  client: BenchClient;
  browser: Browser;
  /** actions.html of the fixture server. */
  url: string;
  report: Report;
};

export const VIEWPORT = { width: 1280, height: 720 };
/** Not the warm pool's shape, so a computer with this display always gets a fresh context. */
export const UNPOOLED = { width: 1280, height: 719 };
/** #target of actions.html: a click there only logs the event. */
export const CLICK_AT = { x: 150, y: 150 };

/** The raw side's computer: a context and its page on the bench's Chromium. */
export async function rawContext(browser: Browser, viewport = VIEWPORT) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  return { context, page };
}
