import { existsSync } from 'node:fs';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from 'playwright-core';
import { unavailable } from '../../errors.js';
import { findChromium, INSTALL_HINT } from './find-chromium.js';

export type BrowserSettings = {
  executable_path: string | null;
  headless: boolean;
  warm_pool: number;
};

export const LAUNCH_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type FreshContext = { context: BrowserContext; page: Page };

/** Playwright's options plus scripts every page of the context runs first (stealth's). */
export type ComputerContextOptions = BrowserContextOptions & { initScripts?: string[] };

/** Default context shape: the only one the warm pool prepares. */
export const POOL_VIEWPORT = { width: 1280, height: 720 };

/**
 * The one shared Chromium (launched on first need, relaunched after a crash) and a small pool of
 * ready contexts so creating a computer does not wait for newContext + newPage.
 */
export class BrowserHost {
  private browser: Promise<Browser> | undefined;
  private ready: FreshContext[] = [];
  private filling: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly settings: BrowserSettings) {}

  /** Starts the browser and fills the pool in the background; failures surface on first use. */
  prewarm(): void {
    if (this.settings.warm_pool > 0) this.fillPool();
  }

  async acquire(options: ComputerContextOptions): Promise<FreshContext> {
    if (isPoolShape(options)) {
      const pooled = this.ready.shift();
      this.fillPool();
      if (pooled) return pooled;
    }
    return this.newContext(options);
  }

  async newContext(options: ComputerContextOptions): Promise<FreshContext> {
    const { initScripts = [], ...contextOptions } = options;
    const browser = await this.launch();
    const context = await browser.newContext(contextOptions);
    try {
      for (const script of initScripts) await context.addInitScript(script);
      return { context, page: await context.newPage() };
    } catch (error) {
      await context.close().catch(() => {});
      throw error;
    }
  }

  launch(): Promise<Browser> {
    if (this.closed) return Promise.reject(unavailable('Benchtop is shutting down'));
    this.browser ??= this.start();
    return this.browser;
  }

  private async start(): Promise<Browser> {
    const executablePath = findChromium(this.settings.executable_path);
    if (!executablePath || !existsSync(executablePath)) {
      this.browser = undefined;
      throw unavailable(
        executablePath
          ? `Chromium not found at ${executablePath}: ${INSTALL_HINT}`
          : `No Chromium found: ${INSTALL_HINT}`,
      );
    }
    try {
      const browser = await chromium.launch({
        executablePath,
        headless: this.settings.headless,
        args: LAUNCH_ARGS,
        // Benchtop shuts down in order on signals; Playwright's own handlers would exit first.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      browser.on('disconnected', () => {
        this.browser = undefined;
        this.ready = [];
      });
      return browser;
    } catch (error) {
      this.browser = undefined;
      throw unavailable(
        `Chromium at ${executablePath} could not start (${firstLine(error)}); ${INSTALL_HINT}`,
      );
    }
  }

  private fillPool(): void {
    if (this.filling || this.closed) return;
    this.filling = (async () => {
      while (!this.closed && this.ready.length < this.settings.warm_pool) {
        const fresh = await this.newContext({ viewport: POOL_VIEWPORT, deviceScaleFactor: 1 });
        if (this.closed) await fresh.context.close().catch(() => {});
        else this.ready.push(fresh);
      }
    })()
      .catch(() => {
        // A failed warm-up is not an error anyone asked about; the next acquire reports it.
      })
      .finally(() => {
        this.filling = undefined;
      });
  }

  /** Resolves when the pool holds what it should (for benchmarks and tests that measure warm paths). */
  async whenWarm(): Promise<void> {
    while (this.filling) await this.filling;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.filling;
    const browser = this.browser;
    this.browser = undefined;
    this.ready = [];
    if (browser) await (await browser.catch(() => undefined))?.close();
  }
}

function isPoolShape(options: ComputerContextOptions): boolean {
  const keys = Object.keys(options).filter(
    (key) => options[key as keyof ComputerContextOptions] !== undefined,
  );
  return (
    keys.every((key) => key === 'viewport' || key === 'deviceScaleFactor') &&
    options.viewport?.width === POOL_VIEWPORT.width &&
    options.viewport?.height === POOL_VIEWPORT.height &&
    (options.deviceScaleFactor ?? 1) === 1
  );
}

export function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error)
    .split('\n')[0]!
    .trim();
}
