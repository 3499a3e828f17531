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

export type SeleniumBackendOptions = {
  name: string;
  /** The hub's address, e.g. http://selenium-hub:4444 (credentials in it are sent as Basic auth). */
  url: string;
  headless: boolean;
  /** A local folder traces are fetched into. */
  tracesDir: string;
};

/**
 * How often each computer's WebDriver session is checked. A node that died or froze leaves the
 * hub's CDP socket open and the node listed for a minute or more; the hub answers for the
 * session with an error (died) or not at all (froze). The check is also the WebDriver command
 * that keeps the session alive: the Grid drops one that had none for its node's
 * --session-timeout (300 s by default), and driving over CDP sends none.
 */
const SESSION_CHECK_MS = 1000;
/** How long a session check may take: the hub answers one in milliseconds, a dead node's in ~1 s. */
const SESSION_CHECK_TIMEOUT_MS = 2000;
/** Failed checks in a row after which a session's computer is lost. */
const LOST_AFTER_FAILURES = 2;

/**
 * A Selenium Grid 4 hub: each computer is a WebDriver session (a Chromium of its own on some
 * node, made through the hub's W3C new-session endpoint) that Playwright then drives over the
 * Grid's CDP endpoint (the session's `se:cdp`), as a context of that browser; the session is
 * deleted when the computer ends. Plain fetch: the few WebDriver calls needed (new session,
 * a cheap GET to keep it alive, delete, /status) do not justify selenium-webdriver's client.
 */
export class SeleniumBackend implements RemoteBackend {
  private readonly hub: URL;
  private readonly auth: string | undefined;

  constructor(private readonly options: SeleniumBackendOptions) {
    this.hub = new URL(options.url.replace(/\/+$/, '') + '/');
    this.auth = this.hub.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(this.hub.username)}:${decodeURIComponent(this.hub.password)}`).toString('base64')}`
      : undefined;
    this.hub.username = '';
    this.hub.password = '';
  }

  async open(
    options: ComputerContextOptions & { storageState?: StorageState },
    onLost: () => void,
  ): Promise<RemoteComputer> {
    const session = await this.newSession();
    const gone = () => this.deleteSession(session.id);
    let browser: Browser | undefined;
    try {
      browser = await chromium.connectOverCDP(this.cdpUrl(session.cdp), {
        timeout: OPEN_TIMEOUT_MS,
        ...(this.auth && { headers: { authorization: this.auth } }),
      });
      const fresh = await openContext(browser, options);
      const watch = this.watch(session.id, onLost);
      const connected = browser;
      return {
        fresh,
        contexts: {
          tracesDir: this.options.tracesDir,
          remote: true,
          newContext: (next) => openContext(connected, next),
        },
        release: async () => {
          watch.stop();
          // A hub that went silent never answers: the session is deleted all the same after.
          await Promise.race([
            connected.close().catch(() => {}),
            new Promise((resolve) => setTimeout(resolve, PROBE_TIMEOUT_MS).unref()),
          ]);
          await gone();
        },
      };
    } catch (error) {
      await browser?.close().catch(() => {});
      await gone();
      throw unavailable(
        `browser backend ${this.options.name}: the Grid's browser could not be driven (${firstLine(error)})`,
        error,
      );
    }
  }

  /** A W3C new session for Chromium through the hub; its id and CDP endpoint. */
  private async newSession(): Promise<{ id: string; cdp: string }> {
    // As Playwright launches Chromium by default (chromiumSandbox: false): nodes often run as root
    // or in containers without user namespaces, where Chromium's sandbox cannot start.
    const args = [
      ...LAUNCH_ARGS,
      '--no-sandbox',
      ...(this.options.headless ? ['--headless=new'] : []),
    ];
    const capabilities = {
      alwaysMatch: { browserName: 'chrome', 'goog:chromeOptions': { args } },
    };
    let answer: { value?: { sessionId?: string; capabilities?: Record<string, unknown> } };
    try {
      const response = await this.request('session', {
        method: 'POST',
        body: JSON.stringify({ capabilities }),
        signal: AbortSignal.timeout(OPEN_TIMEOUT_MS),
      });
      answer = (await response.json()) as typeof answer;
      if (!response.ok) throw new Error(webDriverError(answer) ?? `HTTP ${response.status}`);
    } catch (error) {
      throw unavailable(
        `browser backend ${this.options.name}: the Grid made no session (${firstLine(error)})`,
        error,
      );
    }
    const id = answer.value?.sessionId;
    const cdp = answer.value?.capabilities?.['se:cdp'];
    if (!id || typeof cdp !== 'string') {
      if (id) await this.deleteSession(id);
      throw unavailable(
        `browser backend ${this.options.name}: the Grid's session has no CDP endpoint (se:cdp); it needs Chromium or Chrome nodes`,
      );
    }
    return { id, cdp };
  }

  /**
   * The session's CDP endpoint through the hub as Benchtop reaches it: the Grid names itself by
   * the address it was told (inside a cluster, a service name), so its path is kept and the host
   * is the configured one.
   */
  private cdpUrl(seCdp: string): string {
    const reported = new URL(seCdp);
    const url = new URL(this.hub.href);
    url.protocol = this.hub.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = reported.pathname;
    url.search = reported.search;
    return url.href;
  }

  /**
   * Checks a session every SESSION_CHECK_MS with a cheap WebDriver command (its timeouts) until
   * stopped, and calls `onLost` (once) when it fails LOST_AFTER_FAILURES times in a row (an
   * error answer, or none in SESSION_CHECK_TIMEOUT_MS).
   */
  private watch(id: string, onLost: () => void): { stop(): void } {
    let failures = 0;
    let checking = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      clearInterval(timer);
    };
    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        const response = await this.request(`session/${id}/timeouts`, {
          signal: AbortSignal.timeout(SESSION_CHECK_TIMEOUT_MS),
        });
        await response.body?.cancel();
        failures = response.ok ? 0 : failures + 1;
      } catch {
        failures++;
      } finally {
        checking = false;
      }
      if (failures === LOST_AFTER_FAILURES && !stopped) {
        stop();
        onLost();
      }
    };
    const timer = setInterval(() => void check(), SESSION_CHECK_MS);
    timer.unref();
    return { stop };
  }

  private async deleteSession(id: string): Promise<void> {
    await this.request(`session/${id}`, {
      method: 'DELETE',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    })
      .then((response) => response.body?.cancel())
      .catch(() => {
        // A hub that is gone has dropped the session with it; a node's own timeout ends the rest.
      });
  }

  /**
   * The hub answers /status with at least one node registered. Not `ready`: that is false also
   * when every slot is taken, which is being full (max_computers' business), not down.
   */
  async probe(): Promise<boolean> {
    try {
      const response = await this.request('status', {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      const status = (await response.json()) as { value?: { ready?: boolean; nodes?: unknown[] } };
      return (
        response.ok && (status.value?.ready === true || (status.value?.nodes?.length ?? 0) > 0)
      );
    } catch {
      return false;
    }
  }

  private request(path: string, init: RequestInit): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      ...(this.auth && { authorization: this.auth }),
    };
    return fetch(new URL(path, this.hub), { ...init, headers });
  }

  async close(): Promise<void> {}
}

function webDriverError(answer: unknown): string | undefined {
  const value = (answer as { value?: { message?: unknown } } | undefined)?.value;
  return typeof value?.message === 'string' ? value.message : undefined;
}
