import { randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { mkdir, open, rm, rmdir } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext, type Download, type Page } from 'playwright-core';
import type { PageContext } from '../../../../shared/actions.js';
import { ActionFailure, BenchtopError, invalidRequest } from '../../errors.js';
import type { Action, ActionOutcome } from '../action.js';
import { BrowserDownloads, type DownloadActivity } from '../browser/browser-downloads.js';
import { firstLine, LAUNCH_ARGS } from '../browser/browser-host.js';
import {
  BrowserTabs,
  loadNewTab,
  navigate,
  readHtml,
  type TabActivity,
} from '../browser/browser-tabs.js';
import { INSTALL_HINT, requireChromium } from '../browser/find-chromium.js';
import { sandboxEnv, type ComputerSandbox } from '../../sandbox/computer-sandbox.js';

/** The actions a desktop hands to its browser. */
export const BROWSER_ACTIONS = [
  'navigate',
  'html',
  'list_tabs',
  'new_tab',
  'switch_tab',
  'close_tab',
] as const;
export type BrowserAction = Extract<Action, { type: (typeof BROWSER_ACTIONS)[number] }>;

const LAUNCH_TIMEOUT_MS = 30_000;
/** A close that takes longer is left to the display's sweep, which ends Chromium anyway. */
const CLOSE_TIMEOUT_MS = 5_000;
/**
 * A page busy in a script draws no frame until it is done: waiting for one ends after this. (A
 * hidden page draws none either; it is not waited for.)
 */
const DRAWN_TIMEOUT_MS = 3_000;
/**
 * How long after its frames a page that paints nothing of its own (no first paint comes) is
 * waited for, the time the browser takes to show a committed frame on a loaded machine.
 */
const UNPAINTED_MS = 100;
/** The sandbox's /tmp as programs in it see it. */
const SANDBOX_TMP = '/tmp';
/** Files by which Chromium marks a profile as in use by a running browser. */
const PROFILE_LOCKS = ['SingletonLock', 'SingletonSocket', 'SingletonCookie'];

export type DesktopBrowserOptions = {
  /** Undefined when no Chromium was found. */
  executablePath?: string;
  /**
   * DISPLAY and XAUTHORITY of the X display the window opens on; empty off X11 (host mode on
   * macOS, Windows).
   */
  displayEnv: Record<string, string>;
  /** The computer's sandbox: the browser runs in it (its files, its environment, nothing else). */
  sandbox?: ComputerSandbox;
  width: number;
  height: number;
  /** Inside the workspace, so a persistent desktop saves the profile with it. */
  userDataDir: string;
  /** Read at each opening: limits.max_tabs as it is now. */
  maxTabs: () => number;
  report?: (activity: TabActivity | DownloadActivity) => void;
  /** Where what its pages download is kept: the computer's own folder, outside its sandbox. */
  downloadsDir: string;
};

/**
 * Chromium on a desktop, headed on its display, started by the first navigate or new tab and
 * driven over CDP through a pipe (no debugging port another local process could use). A person
 * may close its window or it may crash: the desktop stays, and the next navigate starts it again.
 */
export class DesktopBrowser {
  private readonly tabs: BrowserTabs;
  private live: BrowserContext | undefined;
  private launching: Promise<BrowserContext> | undefined;
  private closed = false;
  readonly downloads: BrowserDownloads;
  /**
   * In the sandbox, Chromium's /tmp is the computer's own: the folder Playwright names for its
   * downloads is this one there, read on the host where the sandbox's /tmp really is.
   */
  private readonly incoming = `benchtop-downloads-${randomBytes(6).toString('hex')}`;

  constructor(private readonly options: DesktopBrowserOptions) {
    const { sandbox } = options;
    this.downloads = new BrowserDownloads(
      options.downloadsDir,
      (activity) => options.report?.(activity),
      { fetch: sandbox && ((download, to) => this.fromSandbox(sandbox, download, to)) },
    );
    this.tabs = new BrowserTabs(
      (page, id) => this.downloads.watch(page, id),
      (activity) => options.report?.(activity),
      options.maxTabs,
    );
  }

  async perform(
    action: BrowserAction,
    tabId: string | undefined,
    signal?: AbortSignal,
  ): Promise<ActionOutcome> {
    const before = this.running();
    try {
      return await this.performNow(action, tabId, signal);
    } catch (error) {
      // A browser killed or closed a moment ago can fail an action before it reports its end
      // (Playwright notices a few ms after the process is gone); one that starts a browser retries.
      const died = before !== undefined && this.running() === undefined;
      if (!died || (action.type !== 'navigate' && action.type !== 'new_tab')) throw failure(error);
      return this.performNow(action, tabId, signal).catch((retried: unknown) => {
        throw failure(retried);
      });
    }
  }

  private async performNow(
    action: BrowserAction,
    tabId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ActionOutcome> {
    switch (action.type) {
      case 'navigate': {
        const { id, page } = await this.pageToNavigate(tabId);
        const result = await navigate(page, action.url, signal);
        await drawn(page);
        return { result, executedTabId: id };
      }
      case 'html': {
        if (!this.running()) {
          throw invalidRequest(
            'no browser is open on this desktop; open a page first with navigate or POST /computers/{id}/tabs',
          );
        }
        const { id, page } = this.tabs.page(tabId);
        return { result: { ...(await readHtml(page)), url: page.url() }, executedTabId: id };
      }
      case 'list_tabs':
        if (!this.running()) return { result: { tabs: [] } };
        return { result: { tabs: await this.tabs.list() }, executedTabId: this.tabs.mainId };
      case 'new_tab':
        return this.newTab(action.url, signal);
      case 'switch_tab':
        await this.tabs.switchTo(action.tabId).bringToFront();
        await drawn(this.tabs.page(action.tabId).page);
        return { result: { active_tab: action.tabId }, executedTabId: action.tabId };
      case 'close_tab':
        await this.tabs.close(action.tabId);
        // Chromium activates a neighbour of the closed tab; the screen shows the main one instead.
        await this.tabs.page().page.bringToFront();
        return { result: { closed_tab: action.tabId }, executedTabId: this.tabs.mainId };
    }
  }

  /** The named tab, else the main one; a browser that has none opens one. */
  private async pageToNavigate(tabId?: string): Promise<{ id: string; page: Page }> {
    const { context } = await this.open();
    if (tabId === undefined && this.tabs.mainId === undefined)
      this.tabs.add(await context.newPage());
    return this.tabs.page(tabId);
  }

  private async newTab(url: string | undefined, signal?: AbortSignal): Promise<ActionOutcome> {
    const { context, fresh } = await this.open();
    this.tabs.checkRoom();
    // A browser that just started shows one blank tab: the new tab is that one, not a second.
    const blank = fresh && this.tabs.mainId ? this.tabs.page().page : undefined;
    const page = blank?.url() === 'about:blank' ? blank : await context.newPage();
    const id = this.tabs.add(page);
    // In front before it loads, so a screenshot taken meanwhile already shows this tab.
    await page.bringToFront();
    if (url) await loadNewTab(page, id, url, signal);
    await drawn(page);
    return { result: { created_tab_id: id }, executedTabId: id };
  }

  /** The running browser, started if there is none (never started, closed by a person, crashed). */
  private async open(): Promise<{ context: BrowserContext; fresh: boolean }> {
    const running = this.running();
    if (running) return { context: running, fresh: false };
    this.launching ??= this.launch().finally(() => (this.launching = undefined));
    return { context: await this.launching, fresh: true };
  }

  /** The browser while it runs; one killed a moment ago may not have reported its close yet. */
  private running(): BrowserContext | undefined {
    const live = this.live;
    return live && (live.browser()?.isConnected() ?? true) ? live : undefined;
  }

  private async launch(): Promise<BrowserContext> {
    const { executablePath, userDataDir } = this.options;
    if (this.closed) throw new ActionFailure('the desktop is ending');
    // As browser computers say it; launched, it would fail with Playwright's "closed" instead.
    requireChromium(executablePath, (message) => new ActionFailure(message));
    // Only this computer's browser uses the profile; a lock left by one that was killed (or
    // restored from a saved environment) would make Chromium hand over to a process long gone.
    await Promise.all(PROFILE_LOCKS.map((name) => rm(join(userDataDir, name), { force: true })));
    const { sandbox } = this.options;
    if (sandbox) await mkdir(join(sandbox.tmp, this.incoming), { recursive: true, mode: 0o700 });
    let context: BrowserContext;
    try {
      context = await chromium.launchPersistentContext(userDataDir, {
        downloadsPath: sandbox ? join(SANDBOX_TMP, this.incoming) : undefined,
        executablePath: sandbox
          ? await sandbox.launcher('chromium', executablePath)
          : executablePath,
        headless: false,
        // In the computer's sandbox, Chromium's own works too (a user namespace inside it), and
        // keeps a broken renderer from the computer's files; on the host, Benchtop runs as it may
        // (the browser computers' rule applies there).
        chromiumSandbox: sandbox !== undefined,
        viewport: null,
        env: this.env(),
        timeout: LAUNCH_TIMEOUT_MS,
        // Its infobar ("controlled by automated test software") would cover the top of the page.
        ignoreDefaultArgs: ['--enable-automation'],
        args: [...LAUNCH_ARGS, ...windowArgs(this.options.width, this.options.height)],
        // The computer ends its browser in order; Playwright's own handlers would exit first.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      throw new ActionFailure(
        `Chromium at ${executablePath} could not start on this desktop (${firstLine(error)}); ${INSTALL_HINT}`,
      );
    }
    if (this.closed) {
      await context.close().catch(() => {});
      throw new ActionFailure('the desktop is ending');
    }
    context.on('close', () => {
      if (this.live === context) this.live = undefined;
    });
    // Tabs of a browser that died went with it.
    this.tabs.clear();
    for (const page of context.pages()) this.tabs.add(page);
    this.tabs.watch(context);
    this.live = context;
    return context;
  }

  private env(): Record<string, string> {
    const { displayEnv, sandbox } = this.options;
    if (sandbox) return sandboxEnv(displayEnv);
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      // On a Wayland session Chromium would open on the person's own screen, not this display;
      // Benchtop's own variables (its key) are no business of a page's browser.
      if (value !== undefined && name !== 'WAYLAND_DISPLAY' && !name.startsWith('BENCHTOP_'))
        env[name] = value;
    }
    return { ...env, ...displayEnv };
  }

  /** page_context of the tab an action ran in; none while no browser is open. */
  async pageContext(tabId?: string): Promise<PageContext | undefined> {
    if (!this.running() || tabId === undefined) return undefined;
    return this.tabs.context(tabId);
  }

  /** A finished download, copied from where the sandboxed Chromium wrote it. */
  private async fromSandbox(
    sandbox: ComputerSandbox,
    download: Download,
    to: string,
  ): Promise<void> {
    const inside = relative(SANDBOX_TMP, await download.path());
    if (inside.startsWith('..')) throw new Error("the download is outside the sandbox's /tmp");
    const written = join(sandbox.tmp, inside);
    await copyPlainFile(written, to);
    await rm(written, { force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => {});
    await this.downloads.stop();
    // Playwright made the folder it was told of on this side too; nothing is ever written there.
    if (this.options.sandbox) await rmdir(join(SANDBOX_TMP, this.incoming)).catch(() => {});
    const context = this.live;
    this.live = undefined;
    // Forgotten first: tabs closing with the computer are not reported as closed one by one.
    this.tabs.clear();
    if (!context) return;
    await Promise.race([
      context.close().catch(() => {}),
      sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false }),
    ]);
  }
}

/**
 * Copies `from` to a new file `to`, where programs of a sandbox own `from`'s folder: it is opened
 * without following a link and must be a plain file, so a link planted there cannot make Benchtop
 * copy one of the machine's own files.
 */
export async function copyPlainFile(from: string, to: string): Promise<void> {
  const file = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (!(await file.stat()).isFile()) throw new Error(`${from} is not a file`);
    await pipeline(
      file.createReadStream({ autoClose: false }),
      createWriteStream(to, { flags: 'wx', mode: 0o600 }),
    );
  } finally {
    await file.close();
  }
}

function failure(error: unknown): Error {
  if (error instanceof ActionFailure || error instanceof BenchtopError) return error;
  return new ActionFailure(firstLine(error));
}

/** A window filling the screen, so a screenshot of the desktop shows the page. */
function windowArgs(width: number, height: number): string[] {
  return [
    '--start-maximized',
    // For window managers that do not maximize on request.
    '--window-position=0,0',
    `--window-size=${width},${height}`,
    // Started again after a crash or a kill: no "Restore pages?" bubble over the page.
    '--hide-crash-restore-bubble',
    // Keeps the "unsupported command-line flag" infobar (Playwright's --no-sandbox) off the page.
    '--test-type=',
    ...(process.platform === 'linux' ? ['--ozone-platform=x11'] : []),
  ];
}

/**
 * Waits until the page is on the screen. A page can fire `load` before its first frame, and until
 * the browser shows that frame it keeps the previous page on the screen and drops input to the new
 * one: a click at once after the navigate (through X, as on a desktop) focused nothing, and the
 * typing after it went nowhere, in 11 of 60 tries on a quiet machine. Two animation frames (the
 * second one's callback runs once the first has been committed) still lost 8 clicks in 100 on a
 * loaded one: committed is not yet shown. The page's first paint is reported once the frame that
 * holds it has been presented, so that is awaited too: one lost in 550; a page that paints
 * nothing of its own has no first paint and is given UNPAINTED_MS after its frames instead. On a
 * loaded machine two frames can take over a second, so only a page that will not draw (hidden)
 * ends the wait early; a minimized window's page still draws in Chromium on X.
 */
async function drawn(page: Page): Promise<void> {
  // No function is named inside: the sources' runner (tsx) would wrap it with a helper of its own
  // that the page lacks.
  const shown = page.evaluate((unpaintedMs) => {
    const window = globalThis as unknown as {
      requestAnimationFrame(f: () => void): void;
      setTimeout(f: () => void, ms: number): void;
      document: { visibilityState: string };
      PerformanceObserver: new (
        callback: (list: unknown, observer: { disconnect(): void }) => void,
      ) => { observe(options: { type: string; buffered: boolean }): void };
    };
    if (window.document.visibilityState === 'hidden') return undefined;
    const frames = new Promise<void>((resolve) =>
      window.requestAnimationFrame(() => window.requestAnimationFrame(resolve)),
    );
    // A page shown before (another tab, a page from the back/forward cache) has its first paint
    // already: then the frames alone are waited for.
    const painted = new Promise<void>((resolve) =>
      new window.PerformanceObserver((_, observer) => {
        observer.disconnect();
        resolve();
      }).observe({ type: 'paint', buffered: true }),
    );
    return frames.then(() =>
      Promise.race([
        painted,
        new Promise<void>((resolve) => window.setTimeout(resolve, unpaintedMs)),
      ]),
    );
  }, UNPAINTED_MS);
  await Promise.race([shown.catch(() => {}), sleep(DRAWN_TIMEOUT_MS, undefined, { ref: false })]);
}
