import { connect } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { unavailable } from '../../errors.js';
import {
  firstLine,
  LAUNCH_ARGS,
  openContext,
  type ComputerContextOptions,
} from '../browser/browser-host.js';
import {
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  type RemoteBackend,
  type RemoteComputer,
  type StorageState,
} from './remote-backend.js';

export type PlaywrightBackendOptions = {
  name: string;
  /** The server's ws:// endpoint (`playwright run-server`). */
  url: string;
  /** The Chromium on the server's machine, when the server should not use its own. */
  executablePath?: string;
  headless: boolean;
  /** A local folder traces are fetched into. */
  tracesDir: string;
};

/**
 * A Playwright server (`playwright run-server`): one connection, hence one Chromium on the
 * server, shared by the computers placed there, each a context of it as on this machine. The
 * launch options travel with the connection (the server honours args and executablePath only
 * when started with --unsafe; without them it launches its own Chromium with its defaults).
 */
export class PlaywrightBackend implements RemoteBackend {
  private browser: Promise<Browser> | undefined;

  constructor(private readonly options: PlaywrightBackendOptions) {}

  async open(
    options: ComputerContextOptions & { storageState?: StorageState },
  ): Promise<RemoteComputer> {
    const browser = await this.connected();
    const contexts = {
      tracesDir: this.options.tracesDir,
      remote: true,
      newContext: async (next: ComputerContextOptions) => openContext(await this.connected(), next),
    };
    return { fresh: await openContext(browser, options), contexts, release: async () => {} };
  }

  private connected(): Promise<Browser> {
    this.browser ??= this.connect();
    return this.browser;
  }

  private async connect(): Promise<Browser> {
    const { url, executablePath, headless, name } = this.options;
    const launch = { headless, args: LAUNCH_ARGS, ...(executablePath && { executablePath }) };
    try {
      const browser = await chromium.connect(url, {
        headers: { 'x-playwright-launch-options': JSON.stringify(launch) },
        timeout: OPEN_TIMEOUT_MS,
      });
      // Its computers' contexts close with it (each ends as backend_lost); the next one connects anew.
      browser.on('disconnected', () => {
        this.browser = undefined;
      });
      return browser;
    } catch (error) {
      this.browser = undefined;
      throw unavailable(`browser backend ${name} did not connect (${firstLine(error)})`, error);
    }
  }

  /** The server listens (a TCP connection to its port is accepted). */
  probe(): Promise<boolean> {
    const { hostname, port, protocol } = new URL(this.options.url);
    return new Promise((resolve) => {
      const socket = connect({
        host: hostname.replace(/^\[|\]$/g, ''),
        port: Number(port) || (protocol === 'wss:' ? 443 : 80),
      });
      const done = (up: boolean) => {
        socket.destroy();
        resolve(up);
      };
      socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
  }

  async close(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => {});
  }
}
