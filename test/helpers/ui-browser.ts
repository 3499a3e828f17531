import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { LAUNCH_ARGS } from '../../src/main/core/computers/browser/browser-host.js';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';
import type { TestServer } from './test-server.js';

const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'test-results', 'ui');
export type Viewport = { width: number; height: number };
/** The sizes the UI must read well at. */
export const VIEWPORTS: readonly [Viewport, Viewport] = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

/** A Chromium of its own for the person at the UI, apart from the one that runs computers. */
export async function launchUiBrowser(): Promise<Browser> {
  const executablePath = findChromium(null);
  if (!executablePath) throw new Error('no Chromium found for the UI tests');
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', ...LAUNCH_ARGS],
  });
}

export type UiPage = {
  page: Page;
  /** Console errors and uncaught exceptions of the page, in order. */
  errors: string[];
  close(): Promise<void>;
};

/** Opens /ui/ the way the CLI's link does: the key in the URL fragment. */
export async function openUi(
  browser: Browser,
  server: TestServer,
  route = '',
  viewport: Viewport = VIEWPORTS[0],
): Promise<UiPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  // A locator that never matches fails naming itself, well before the test's own timeout.
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  await page.goto(`${server.url}/ui/#key=${server.key}`);
  await page.getByRole('navigation', { name: 'Screens' }).waitFor();
  if (route) await page.evaluate((hash) => (location.hash = hash), route);
  return { page, errors, close: () => context.close() };
}

/**
 * A suite's window page, one at a time: `open` replaces it (failing if the one before logged an
 * error), `close` (each test's afterEach) closes it and answers the errors it logged, which a
 * test expects to be none.
 */
export class UiPages {
  private current: UiPage | undefined;

  constructor(private readonly at: () => { browser: Browser; server: TestServer }) {}

  async open(route = '', viewport: Viewport = VIEWPORTS[0]): Promise<Page> {
    const before = await this.close();
    if (before.length > 0) throw new Error(`the page before logged errors:\n${before.join('\n')}`);
    const { browser, server } = this.at();
    this.current = await openUi(browser, server, route, viewport);
    return this.current.page;
  }

  /** Console errors and uncaught exceptions of the open page so far (a test may clear them). */
  get errors(): string[] {
    return this.current?.errors ?? [];
  }

  async close(): Promise<string[]> {
    const errors = this.errors;
    await this.current?.close();
    this.current = undefined;
    return errors;
  }
}

/** Where a picture kept for a person to look at goes (test-results/ui, not committed). */
export function screenshotPath(file: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, file);
}

/** Saves the page at each of the sizes the UI must read well at (not committed; for a person). */
export async function saveScreenshots(page: Page, name: string): Promise<void> {
  const original = page.viewportSize();
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(300);
    await page.screenshot({
      path: screenshotPath(`${name}-${viewport.width}x${viewport.height}.png`),
    });
  }
  if (original) await page.setViewportSize(original);
}
