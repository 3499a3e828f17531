import type { BrowserContext, Page, Request } from 'playwright-core';
import type { HarEntry } from './har.js';
import { requestEntry } from './request-entry.js';

/** How long a page's opening of a tab is waited for (a blocked popup never comes). */
const OPENING_MS = 10_000;

export type OpeningTabsDeps = {
  /** The page's own network session, once it listens. */
  networkOf: (page: Page) => { saw(url: string, startMs: number): boolean } | undefined;
  /** Makes every page's session remember which requests it saw start (or forget). */
  track: (on: boolean) => void;
  pageref: (page: Page) => string | undefined;
  write: (entry: HarEntry) => void;
};

/**
 * The first load of a tab a site opens. A page's own network session listens only once
 * Benchtop learns of the page, when it is loading already; so from the moment a page says it
 * opens a tab until the new page listens, Playwright's request events (which see pages from
 * their start) are borrowed, and what they report that no session saw is written from them.
 * Borrowed only then: each request they report stays in memory for a long while.
 */
export class OpeningTabs {
  private lease: { before: Set<Page>; timer: NodeJS.Timeout } | undefined;
  /** Requests taken from Playwright and not yet written. */
  private pending = 0;
  private stopped = false;

  constructor(
    private readonly context: BrowserContext,
    private readonly deps: OpeningTabsDeps,
  ) {}

  /** A page of the context is about to open a tab. */
  expect(): void {
    if (this.stopped) return;
    if (this.lease) {
      this.lease.timer.refresh();
      return;
    }
    this.deps.track(true);
    const timer = setTimeout(() => this.release(), OPENING_MS);
    timer.unref();
    this.lease = { before: new Set(this.context.pages()), timer };
    this.context.on('request', this.onRequest);
  }

  /** A page's own session listens now: if it is a new one, it covers the rest of its load. */
  listening(page: Page): void {
    if (this.lease && !this.lease.before.has(page)) this.release();
  }

  stop(): void {
    this.stopped = true;
    this.release();
  }

  private readonly onRequest = (request: Request): void => {
    this.pending++;
    void requestEntry(request, undefined)
      .then((entry) => {
        if (!entry || this.stopped) return;
        const page = pageOf(request, this.context);
        if (page && this.deps.networkOf(page)?.saw(request.url(), request.timing().startTime)) {
          return;
        }
        const pageref = page && this.deps.pageref(page);
        this.deps.write(pageref ? { ...entry, pageref } : entry);
      })
      .finally(() => {
        this.pending--;
        if (!this.lease && this.pending === 0) this.deps.track(false);
      });
  };

  private release(): void {
    const lease = this.lease;
    if (!lease) return;
    this.lease = undefined;
    clearTimeout(lease.timer);
    this.context.off('request', this.onRequest);
    if (this.pending === 0) this.deps.track(false);
  }
}

/**
 * The page a request is of. A tab's first navigation began before its frame existed, so
 * Playwright knows no frame for it: it is the page that shows where its redirects ended.
 */
function pageOf(request: Request, context: BrowserContext): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    let last = request;
    for (let next = last.redirectedTo(); next; next = last.redirectedTo()) last = next;
    return context.pages().find((page) => page.url() === last.url());
  }
}
