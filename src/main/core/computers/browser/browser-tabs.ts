import type { BrowserContext, Page } from 'playwright-core';
import type { PageContext } from '../../../../shared/actions.js';
import { abortable } from '../abortable.js';
import { ActionFailure, invalidRequest, notFound } from '../../errors.js';
import type { ComputerEventInput } from '../../events/computer-events.js';
import { newId } from '../../ids.js';
import { firstLine } from './browser-host.js';
import { describeLoadFailure, ERROR_PAGE } from './load-failure.js';
import type { PageGlobals } from './page-globals.js';

const HIDDEN_SCHEMES = /^(chrome|devtools|chrome-extension):/;
export const NAVIGATION_TIMEOUT_MS = 30_000;
/** A load that failed on the network; one the browser aborted itself (a download) shows none. */
const SHOWS_ERROR_PAGE = /net::ERR_(?!ABORTED)/;
/** How long a failed load's error page may take to show (a few ms on a quiet machine). */
const ERROR_PAGE_WAIT_MS = 2000;

/** One tab as the tabs endpoint lists it. */
export type TabListing = {
  tab_id: string;
  id: string;
  url: string;
  title: string;
  is_main: boolean;
};

/**
 * What the tabs report on the computer's events: tabs opened, closed, switched and refused, and
 * navigations.
 */
export type TabActivity = Extract<
  ComputerEventInput,
  { type: 'tab' | 'tab_refused' | 'navigation' }
>;

/**
 * The tabs of one browser computer in opening order, with the main tab (where actions run when
 * no tab_id is given). Pages the site opens (popups, target=_blank) join and become main, as in a
 * real browser, up to `maxTabs`: beyond it they are closed at once and reported as tab_refused
 * (a page calling window.open in a loop would otherwise fill the machine with renderers).
 * chrome:// and devtools:// pages are never listed.
 */
export class BrowserTabs {
  private readonly pages = new Map<string, Page>();
  private readonly ids = new WeakMap<Page, string>();
  private readonly refused = new WeakSet<Page>();
  private main: string | undefined;

  constructor(
    private readonly onOpen: (page: Page, id: string) => void,
    private readonly report: (activity: TabActivity) => void = () => {},
    /** Read at each opening, so a changed limits.max_tabs applies to a running computer. */
    private readonly maxTabs: () => number = () => Infinity,
  ) {}

  /** Follows pages the context opens from now on; those beyond maxTabs are refused. */
  watch(context: BrowserContext): void {
    context.on('page', (page) => {
      if (this.ids.has(page)) return;
      if (this.pages.size >= this.maxTabs()) this.refuse(page);
      else this.add(page);
    });
  }

  private refuse(page: Page): void {
    const maxTabs = this.maxTabs();
    this.refused.add(page);
    const url = page.url();
    page.close().catch(() => {
      // Gone already (its opener or the context closed).
    });
    this.report({
      type: 'tab_refused',
      url,
      max_tabs: maxTabs,
      message: `a page opened a tab while the computer had ${maxTabs} tabs open, the most it may have (limits.max_tabs); the new tab was closed`,
    });
  }

  add(page: Page): string {
    const known = this.ids.get(page);
    if (known) return known;
    if (this.refused.has(page)) {
      // Pages a site opened took the last free place between the check and the opening.
      throw new ActionFailure(
        `the computer reached its ${this.maxTabs()} tabs (limits.max_tabs) while the tab opened, so it was closed; close a tab and try again`,
      );
    }
    const id = this.track(page, newId('tab'));
    this.report({ type: 'tab', event: 'opened', tab_id: id, url: page.url() });
    return id;
  }

  /** Takes a tab back under its old id in a rebuilt context: nothing opened, so nothing reported. */
  adopt(page: Page, id: string): void {
    this.track(page, id);
  }

  private track(page: Page, id: string): string {
    this.ids.set(page, id);
    this.pages.set(id, page);
    this.main = id;
    page.on('close', () => this.forget(id));
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame() && this.pages.get(id) === page)
        this.report({ type: 'navigation', tab_id: id, url: frame.url() });
    });
    this.onOpen(page, id);
    return id;
  }

  private forget(id: string): void {
    const page = this.pages.get(id);
    if (!page || !this.pages.delete(id)) return;
    this.report({ type: 'tab', event: 'closed', tab_id: id, url: page.url() });
    if (this.main !== id) return;
    this.main = [...this.pages.keys()].at(-1);
    if (this.main) this.reportSwitch(this.main);
  }

  private reportSwitch(id: string): void {
    const url = this.pages.get(id)?.url() ?? '';
    this.report({ type: 'tab', event: 'switched', tab_id: id, url });
  }

  get mainId(): string | undefined {
    return this.main;
  }

  /** The page an action runs on: the named tab, else the main one. */
  page(tabId?: string): { id: string; page: Page } {
    const id = tabId ?? this.main;
    const page = id === undefined ? undefined : this.pages.get(id);
    if (!page || !id) {
      throw new ActionFailure(
        tabId ? `no open tab ${tabId} in this computer` : 'this computer has no open tab',
      );
    }
    return { id, page };
  }

  /** Like page(), for endpoints where an unknown tab is a 404. */
  require(tabId: string): Page {
    const page = this.pages.get(tabId);
    if (!page)
      throw notFound(
        `no open tab ${tabId} in this computer; list tabs with GET /computers/{id}/tabs`,
        'tab_id',
      );
    return page;
  }

  visible(): Array<{ id: string; page: Page }> {
    return [...this.pages]
      .filter(([, page]) => !HIDDEN_SCHEMES.test(page.url()))
      .map(([id, page]) => ({ id, page }));
  }

  /** The listed tabs as the tabs endpoint answers them. */
  list(): Promise<TabListing[]> {
    const main = this.main;
    return Promise.all(
      this.visible().map(async ({ id, page }) => ({
        tab_id: id,
        id,
        url: page.url(),
        title: await page.title().catch(() => ''),
        is_main: id === main,
      })),
    );
  }

  /** The page_context of a tab (else the main one). */
  async context(tabId?: string): Promise<PageContext> {
    const { id, page } = this.page(tabId);
    const metrics = await page.evaluate(() => {
      const window = globalThis as unknown as PageGlobals;
      const { document } = window;
      return {
        title: document.title,
        viewport_width: window.innerWidth,
        viewport_height: window.innerHeight,
        page_width: document.documentElement.scrollWidth,
        page_height: document.documentElement.scrollHeight,
        scroll_x: window.scrollX,
        scroll_y: window.scrollY,
        device_scale_factor: window.devicePixelRatio,
      };
    });
    return { tab_id: id, url: page.url(), is_main_tab: id === this.main, ...metrics };
  }

  all(): Array<{ id: string; page: Page }> {
    return [...this.pages].map(([id, page]) => ({ id, page }));
  }

  switchTo(tabId: string): Page {
    const page = this.require(tabId);
    this.main = tabId;
    this.reportSwitch(tabId);
    return page;
  }

  /** Makes a tab main again after adopt(), without reporting a switch nobody asked for. */
  restoreMain(tabId: string): void {
    this.require(tabId);
    this.main = tabId;
  }

  async close(tabId: string): Promise<void> {
    const page = this.require(tabId);
    if (this.visible().length <= 1) {
      throw invalidRequest(
        'cannot close the last tab of a computer; delete the computer instead',
        'tab_id',
      );
    }
    await page.close();
    this.forget(tabId);
  }

  checkRoom(): void {
    const maxTabs = this.maxTabs();
    if (this.pages.size >= maxTabs) {
      throw invalidRequest(
        `a computer has at most ${maxTabs} tabs; close one first (limits.max_tabs)`,
      );
    }
  }

  clear(): void {
    this.pages.clear();
    this.main = undefined;
  }
}

/** A page's markup and title in one round trip (page.content() plus page.title() would be two). */
export async function readHtml(page: Page): Promise<{ html_content: string; title: string }> {
  return page.evaluate(() => {
    const { document, XMLSerializer } = globalThis as unknown as PageGlobals;
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
    return { html_content: doctype + document.documentElement.outerHTML, title: document.title };
  });
}

/**
 * Loads a URL in a tab and waits for `load`: where the tab ended up, and its title. An aborted
 * `signal` stops the loading at once (the page keeps what it showed).
 */
export async function navigate(
  page: Page,
  url: string,
  signal?: AbortSignal,
): Promise<{ url: string; title: string }> {
  await goto(page, url, signal);
  return { url: page.url(), title: await page.title() };
}

/** Loads the URL a tab was opened with; a failure says the tab is open all the same. */
export async function loadNewTab(
  page: Page,
  id: string,
  url: string,
  signal?: AbortSignal,
): Promise<void> {
  await goto(page, url, signal).catch((error: unknown) => {
    if (error instanceof ActionFailure) throw error;
    throw new ActionFailure(`tab ${id} opened, but ${firstLine(error)}`);
  });
}

/** Why a load failed, in the words of whoever asked for it (not Playwright's "page.goto: …"). */
function failedLoad(message: string, url: string): string {
  const reason = message.replace(/^page\.goto: /, '');
  if (reason.startsWith('Download is starting')) {
    return `${url} started a download instead of loading a page; the file goes to the computer's downloads and the tab stays where it was`;
  }
  return reason;
}

function goto(page: Page, url: string, signal: AbortSignal | undefined): Promise<unknown> {
  const loading = page
    .goto(url, { waitUntil: 'load', timeout: NAVIGATION_TIMEOUT_MS })
    .catch(async (error: unknown) => {
      const message = firstLine(error);
      // Chromium commits its error page ("This site can't be reached") a few ms after the load
      // failed. Waited for here: that commit would otherwise interrupt the tab's next navigation
      // ("interrupted by another navigation to chrome-error://chromewebdata/").
      if (SHOWS_ERROR_PAGE.test(message)) {
        await page
          .waitForURL(ERROR_PAGE, { waitUntil: 'commit', timeout: ERROR_PAGE_WAIT_MS })
          .catch(() => {});
        const reason = /net::ERR_[A-Z_]+/.exec(message)?.[0];
        await describeLoadFailure(page, { url, reason }).catch(() => {});
      }
      throw new Error(failedLoad(message, url), { cause: error });
    });
  return abortable(loading, signal, 'the navigation', () => {
    page.evaluate(() => (globalThis as unknown as PageGlobals).stop()).catch(() => {});
  });
}
