import { join } from 'node:path';
import { readTarget } from './page-target.js';
import type { BrowserContext, BrowserContextOptions, CDPSession, Page } from 'playwright-core';
import type { PageContext } from '../../../../shared/actions.js';
import { CONTROL_CHARACTERS } from '../../../../shared/stealth.js';
import { redactProxy } from '../../config.js';
import { ActionFailure, BenchtopError, invalidRequest } from '../../errors.js';
import type { ActionName, ActionOutcome, MouseButton, Point } from '../action.js';
import type { Key } from '../../keyboard/key-names.js';
import {
  pngSize,
  type CaptureOptions,
  type FrameSink,
  type RequestOf,
  type Screenshot,
  type TabbedOperator,
  type PageLook,
} from '../operator.js';
import { Activity } from '../activity.js';
import { RECORDED_DOWNLOADS, type RecordingSink } from '../drivers/driver.js';
import { BrowserDownloads, type DownloadActivity } from './browser-downloads.js';
import { BrowserRecording, type OpenedSession } from './browser-recording.js';
import { startBrowserCapture } from './browser-screencast.js';
import { captureViewport } from './capture-viewport.js';
import { firstLine, type ContextSource, type FreshContext } from './browser-host.js';
import {
  BrowserTabs,
  loadNewTab,
  navigate,
  NAVIGATION_TIMEOUT_MS,
  readHtml,
  type TabActivity,
} from './browser-tabs.js';
import { inPlaywrightLayout, playwrightKey } from '../../keyboard/playwright-keymap.js';

/** What a browser computer performs itself (the runner composes wait, screenshot, debug…). */
export const BROWSER_CAPABILITIES = new Set([
  'click',
  'mouse_down',
  'mouse_up',
  'move',
  'drag',
  'scroll',
  'type',
  'keypress',
  'key_down',
  'key_up',
  'navigate',
  'html',
  'viewport',
  'change_proxy',
  'list_tabs',
  'new_tab',
  'switch_tab',
  'close_tab',
] as const satisfies ActionName[]);
type BrowserActionName = typeof BROWSER_CAPABILITIES extends Set<infer N> ? N : never;
type BrowserAction = RequestOf<BrowserActionName>['action'];
const TAB_ACTIONS = new Set(['list_tabs', 'new_tab', 'switch_tab', 'close_tab'] as const);
type TabActionName = typeof TAB_ACTIONS extends Set<infer N> ? N : never;

function isTabAction(
  action: BrowserAction,
): action is Extract<BrowserAction, { type: TabActionName }> {
  return (TAB_ACTIONS as ReadonlySet<string>).has(action.type);
}

const CDP_BUTTONS = { back: 8, forward: 16 } as const;

export type BrowserOperatorOptions = {
  /** Where its contexts come from (change_proxy makes another one there). */
  host: ContextSource;
  /** The context is the default one of a Chromium of its own (a computer with cdp). */
  ownBrowser?: boolean;
  contextOptions: BrowserContextOptions;
  /** Read at each opening: limits.max_tabs as it is now. */
  maxTabs: () => number;
  /** Called once when the context goes away without close() (browser crash or kill). */
  onCrash: () => void;
  /**
   * Tabs opened, closed and switched, main-frame navigations and downloads, for the computer's
   * events.
   */
  report?: (activity: TabActivity | DownloadActivity) => void;
  /** The computer's own folder its downloads are saved in. */
  downloadsDir: string;
  /** Set when the computer is recorded: its requests, console and trace go there. */
  recording?: RecordingSink;
  /** Frees what the computer held besides its context (a remote browser's session), once. */
  release?: () => Promise<void>;
};

/** A browser computer: one BrowserContext of the shared Chromium, its pages as tabs. */
export class BrowserOperator implements TabbedOperator<BrowserActionName> {
  readonly kind = 'browser' as const;
  readonly capabilities: ReadonlySet<BrowserActionName> = BROWSER_CAPABILITIES;
  private context!: BrowserContext;
  private readonly tabs: BrowserTabs;
  private readonly cdpSessions = new WeakMap<Page, Promise<CDPSession>>();
  private readonly recording: BrowserRecording | undefined;
  /** Actions and screenshots under way: a recorder's capture keeps out of their way. */
  private readonly activity = new Activity();
  /** The first page's network session, opened in the warm pool, until the recording takes it. */
  private opened: OpenedSession | undefined;
  private closing = false;
  readonly downloads: BrowserDownloads;

  constructor(
    fresh: FreshContext,
    private readonly options: BrowserOperatorOptions,
  ) {
    this.downloads = new BrowserDownloads(
      options.downloadsDir,
      (activity) => this.options.report?.(activity),
      { keepIn: options.recording && join(options.recording.dir, RECORDED_DOWNLOADS) },
    );
    this.tabs = new BrowserTabs(
      (page, id) => {
        this.fitViewport(page);
        this.downloads.watch(page, id);
      },
      (activity) => this.options.report?.(activity),
      options.maxTabs,
    );
    this.adopt(fresh.context);
    this.tabs.add(fresh.page);
    this.tabs.watch(this.context);
    if (options.recording) {
      this.recording = new BrowserRecording(options.recording, {
        tracesDir: options.host.tracesDir,
        remote: options.host.remote === true,
        tabIdOf: (page) => this.tabs.all().find((tab) => tab.page === page)?.id,
      });
      if (fresh.network) this.opened = { page: fresh.page, session: fresh.network };
    } else {
      fresh.network?.detach().catch(() => {});
    }
  }

  /**
   * A CDP client is opening a page: its first requests start before the page's own network
   * session can listen, so the recording borrows Playwright's meanwhile, as for a site's popup.
   */
  expectTab(): void {
    this.recording?.expectTab();
  }

  /** Busy until `done` settles: a CDP client's command counts as an action for the capture. */
  busyUntil(done: Promise<unknown>): void {
    this.activity.around(() => done).catch(() => {});
  }

  /** Starts recording what the computer does, when it is recorded (never fails the computer). */
  async startRecording(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    await this.recording?.follow(this.context, opened);
  }

  private adopt(context: BrowserContext): void {
    this.context = context;
    context.on('close', () => {
      if (this.context === context && !this.closing) this.options.onCrash();
    });
  }

  private get viewport(): { width: number; height: number } {
    return this.options.contextOptions.viewport ?? { width: 1280, height: 720 };
  }

  perform(request: RequestOf<BrowserActionName>): Promise<ActionOutcome> {
    return this.activity.around(() => this.performNow(request));
  }

  private async performNow({
    action,
    tabId,
    signal,
  }: RequestOf<BrowserActionName>): Promise<ActionOutcome> {
    if (isTabAction(action)) return this.performTabAction(action, signal);
    const { id, page } = this.tabs.page(tabId);
    try {
      return { result: await this.performOnPage(page, action, signal), executedTabId: id };
    } catch (error) {
      if (error instanceof ActionFailure || error instanceof BenchtopError) throw error;
      throw new ActionFailure(firstLine(error));
    }
  }

  private async performOnPage(
    page: Page,
    action: Exclude<BrowserAction, { type: TabActionName }>,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, unknown>> {
    switch (action.type) {
      case 'click':
        await this.click(page, action.at, action.button, action.count);
        return {};
      case 'mouse_down':
      case 'mouse_up':
        await this.press(page, action.at, action.button, action.type === 'mouse_down');
        return {};
      case 'move':
        await page.mouse.move(action.at.x, action.at.y);
        return {};
      case 'drag':
        await this.drag(page, action.path);
        return {};
      case 'scroll':
        // Pipelined like Playwright's own click: Chromium acks a move only at the next frame.
        await Promise.all([
          page.mouse.move(action.at.x, action.at.y),
          page.mouse.wheel(action.dx, action.dy),
        ]);
        return {};
      case 'type':
        await page.keyboard.type(action.text);
        return {};
      case 'keypress':
        await pressChord(page, action.keys);
        return {};
      case 'key_down':
        await page.keyboard.down(layoutKey(action.key));
        return {};
      case 'key_up':
        await page.keyboard.up(layoutKey(action.key));
        return {};
      case 'navigate':
        return navigate(page, action.url, signal);
      case 'html':
        return { ...(await readHtml(page)), url: page.url() };
      case 'viewport':
        return this.resize(action.width, action.height, action.scale);
      case 'change_proxy':
        return this.changeProxy(action.proxyUrl);
    }
  }

  private async performTabAction(
    action: Extract<BrowserAction, { type: TabActionName }>,
    signal: AbortSignal | undefined,
  ): Promise<ActionOutcome> {
    switch (action.type) {
      case 'list_tabs':
        return { result: { tabs: await this.tabs.list() }, executedTabId: this.tabs.mainId };
      case 'new_tab': {
        this.tabs.checkRoom();
        const page = await this.context.newPage();
        await this.recording?.watching(page);
        const id = this.tabs.add(page);
        if (action.url) await loadNewTab(page, id, action.url, signal);
        return { result: { created_tab_id: id }, executedTabId: id };
      }
      case 'switch_tab':
        await this.tabs.switchTo(action.tabId).bringToFront();
        return { result: { active_tab: action.tabId }, executedTabId: action.tabId };
      case 'close_tab':
        await this.tabs.close(action.tabId);
        return { result: { closed_tab: action.tabId }, executedTabId: this.tabs.mainId };
    }
  }

  private async click(page: Page, at: Point, button: MouseButton, count: 1 | 2 | 3): Promise<void> {
    if (button === 'back' || button === 'forward') {
      await this.press(page, at, button, true);
      await this.press(page, at, button, false);
      return;
    }
    // One call: Playwright pipelines move, downs and ups instead of waiting for each.
    await page.mouse.click(at.x, at.y, { button, clickCount: count });
  }

  private async press(page: Page, at: Point, button: MouseButton, down: boolean): Promise<void> {
    if (button === 'back' || button === 'forward') {
      // Playwright's mouse knows three buttons; CDP dispatches the side buttons too.
      const cdp = await this.cdp(page);
      await cdp.send('Input.dispatchMouseEvent', {
        type: down ? 'mousePressed' : 'mouseReleased',
        x: at.x,
        y: at.y,
        button,
        buttons: down ? CDP_BUTTONS[button] : 0,
        clickCount: 1,
      });
      return;
    }
    // Pipelined: the press is sent right behind the move (Playwright's click does the same).
    await Promise.all([
      page.mouse.move(at.x, at.y),
      down ? page.mouse.down({ button }) : page.mouse.up({ button }),
    ]);
  }

  private async drag(page: Page, path: Point[]): Promise<void> {
    const [first, ...rest] = path;
    const steps = path.length === 2 ? 10 : 1;
    await page.mouse.move(first!.x, first!.y);
    await page.mouse.down();
    for (const point of rest) await page.mouse.move(point.x, point.y, { steps });
    await page.mouse.up();
  }

  private cdp(page: Page): Promise<CDPSession> {
    let session = this.cdpSessions.get(page);
    if (!session) {
      session = this.context.newCDPSession(page);
      this.cdpSessions.set(page, session);
    }
    return session;
  }

  private async resize(width: number, height: number, scale: number | undefined) {
    const current = this.options.contextOptions.deviceScaleFactor ?? 1;
    if (scale !== undefined && scale !== current) {
      throw invalidRequest(
        `a browser computer keeps the scale it was created with (${current}); create a computer with display.scale ${scale}`,
        'scale_factor',
      );
    }
    this.options.contextOptions.viewport = { width, height };
    await Promise.all(this.tabs.all().map(({ page }) => page.setViewportSize({ width, height })));
    return { width, height, scale_factor: current };
  }

  private fitViewport(page: Page): void {
    const size = page.viewportSize();
    const { width, height } = this.viewport;
    if (size && (size.width !== width || size.height !== height)) {
      page.setViewportSize({ width, height }).catch(() => {});
    }
  }

  /** Rebuilds the context behind the new proxy, carrying cookies, storage and open tabs. */
  private async changeProxy(proxyUrl: string): Promise<Record<string, unknown>> {
    if (this.options.ownBrowser) {
      // Its CDP clients hold its browser: a rebuilt context elsewhere would leave them behind.
      throw invalidRequest(
        'change_proxy is not available on a computer created with cdp (its CDP clients are attached to its browser); create a computer with use_advanced_proxy instead',
        'proxy_url',
      );
    }
    // Checked before anything changes: a refused URL leaves the computer as it was.
    const proxy = proxyFromUrl(proxyUrl, 'proxy_url');
    const storageState = await this.context.storageState({ indexedDB: true });
    const open = this.tabs.visible().map(({ id, page }) => ({ id, url: page.url() }));
    const main = this.tabs.mainId;
    const contextOptions = { ...this.options.contextOptions, proxy };
    const fresh = await this.options.host.newContext({ ...contextOptions, storageState });
    const old = this.context;
    this.options.contextOptions = contextOptions;
    this.adopt(fresh.context);
    this.tabs.clear();
    // The old context's trace and requests are complete before it closes.
    await this.recording?.follow(fresh.context);
    await old.close().catch(() => {});
    for (const [index, tab] of open.entries()) {
      const page = index === 0 ? fresh.page : await fresh.context.newPage();
      await this.recording?.watching(page);
      this.tabs.adopt(page, tab.id);
      if (tab.url !== 'about:blank')
        await page.goto(tab.url, { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => {});
    }
    if (main && open.some((tab) => tab.id === main)) this.tabs.restoreMain(main);
    this.tabs.watch(fresh.context);
    return { proxy_url: redactProxy(proxyUrl), page_state_reloaded: true };
  }

  startCapture(options: CaptureOptions, onFrame: FrameSink): Promise<() => Promise<void>> {
    const mainTab = () => {
      const id = this.tabs.mainId;
      return id === undefined ? undefined : { tabId: id, page: this.tabs.page(id).page };
    };
    return startBrowserCapture(() => this.context, mainTab, options, onFrame, this.activity);
  }

  screenshot(tabId?: string): Promise<Screenshot> {
    return this.activity.around(async () => {
      const { id, page } = this.tabs.page(tabId);
      const png = await this.capture(page);
      // What a recorder's capture shows: it need not capture this screen again.
      if (id === this.tabs.mainId) this.activity.shown(png);
      return { png, ...pngSize(png), tabId: id };
    }, 'screenshot');
  }

  /** The viewport as a PNG, straight from Chromium (see captureViewport). */
  private async capture(page: Page): Promise<Buffer> {
    return captureViewport(await this.cdp(page));
  }

  pageContext(tab: { executed?: string; requested?: string }): Promise<PageContext | undefined> {
    return this.tabs.context(tab.executed ?? tab.requested);
  }

  /** Cookies, localStorage and IndexedDB, for saving a persistent computer. */
  storageState() {
    return this.context.storageState({ indexedDB: true });
  }

  mainTabId(): string | undefined {
    return this.tabs.mainId;
  }

  async look(tabId: string | undefined, at: Point | undefined, target: boolean): Promise<PageLook> {
    const { id, page } = this.tabs.page(tabId);
    const element = target ? await readTarget(await this.cdp(page), at).catch(() => null) : null;
    return { tabId: id, url: page.url(), target: element };
  }

  async close(): Promise<void> {
    this.closing = true;
    // Ended while the context is there to end its trace (and with the tabs known for the HAR).
    await this.recording?.stop();
    await this.downloads.stop();
    this.tabs.clear();
    // A remote browser whose machine went silent never answers the close: it is not waited for
    // longer than REMOTE_CLOSE_MS (its backend's loss ends it there anyway).
    const closed = this.context.close().catch(() => {});
    await (this.options.host.remote ? Promise.race([closed, sleep(REMOTE_CLOSE_MS)]) : closed);
    await this.downloads.keepTheRest();
    await this.options.release?.().catch(() => {});
  }
}

/** How long the end of a computer on a remote backend waits for its context to close. */
const REMOTE_CLOSE_MS = 5000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function layoutKey(key: Key): string {
  if (!inPlaywrightLayout(key))
    throw new ActionFailure(`the key "${key}" cannot be pressed in a browser computer`);
  return playwrightKey(key);
}

/** Presses all keys in order and releases them in reverse; a lone character off the layout is typed. */
async function pressChord(page: Page, keys: Key[]): Promise<void> {
  if (keys.length === 1 && !inPlaywrightLayout(keys[0]!) && [...keys[0]!].length === 1) {
    await page.keyboard.insertText(keys[0]!);
    return;
  }
  // One call for the whole chord ("Control+KeyA"): Playwright presses in order, releases in reverse.
  await page.keyboard.press(keys.map(layoutKey).join('+'));
}

/**
 * Playwright's proxy option for a proxy URL; throws invalid_request on `param` for control
 * characters. The URL parser would silently drop a line break (so another user name than the one
 * given would be sent), and a percent-encoded one (%0D%0A, %00) would reach the credentials.
 */
export function proxyFromUrl(
  proxyUrl: string,
  param = 'proxy_url',
): BrowserContextOptions['proxy'] {
  if (!proxyUrl) return undefined;
  if (CONTROL_CHARACTERS.test(proxyUrl)) {
    throw invalidRequest(
      `${param} must be one line of printable text: no line breaks, tabs, NUL or other control characters`,
      param,
    );
  }
  const url = new URL(proxyUrl);
  const server = `${url.protocol}//${url.host}`;
  if (!url.username) return { server };
  let credentials: { username: string; password: string };
  try {
    credentials = {
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };
  } catch {
    throw invalidRequest(
      `the user name or password in ${param} is not valid percent-encoding (write a literal % as %25)`,
      param,
    );
  }
  if (CONTROL_CHARACTERS.test(credentials.username + credentials.password)) {
    throw invalidRequest(
      `the user name and password in ${param} must not encode control characters (%00 to %1F, %7F)`,
      param,
    );
  }
  return { server, ...credentials };
}
