import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, ConsoleMessage, Page, WebError } from 'playwright-core';
import { PRIVATE_FILE } from '../../store/private-files.js';
import type { RecordingSink } from '../drivers/driver.js';
import { BrowserTrace } from './browser-trace.js';
import { HAR_LOG, type HarEntry } from './har.js';
import { OpeningTabs } from './opening-tabs.js';
import { PageNetwork } from './page-network.js';

export type BrowserRecordingOptions = {
  /** The browser's tracesDir, where tracing writes as it goes. */
  tracesDir: string;
  /** The browser runs on another machine (its trace is fetched when a context ends). */
  remote?: boolean;
  /** The tab id of a page, once the computer's tabs know it. */
  tabIdOf: (page: Page) => string | undefined;
};

/** How long leaving a context waits for its pages' sessions to let go. */
const LEAVE_WAIT_MS = 1000;

/**
 * What a recorded browser computer leaves in its recording's folder (docs/API.md §13): every
 * request of its pages as HAR entries (har.ndjson, a line each as they finish, so a kill keeps
 * what came before), its pages' console messages and errors through the sink, and a Playwright
 * trace (trace.zip, written when it ends). Nothing here waits on an action's way.
 */
export class BrowserRecording {
  private readonly har: WriteStream;
  private readonly trace: BrowserTrace;
  private followed: FollowedContext | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly sink: RecordingSink,
    private readonly options: BrowserRecordingOptions,
  ) {
    this.har = createWriteStream(join(sink.dir, HAR_LOG), { flags: 'a', mode: PRIVATE_FILE });
    this.har.on('error', () => {
      // A full disk loses the HAR from there on; the computer runs on.
    });
    this.trace = new BrowserTrace(sink.dir, options.tracesDir, options.remote);
  }

  /**
   * Records a context from now on: the computer's first, or the one change_proxy built. `opened`:
   * a page's network session made ahead (the warm pool's).
   */
  async follow(context: BrowserContext, opened?: OpenedSession): Promise<void> {
    await this.leave();
    const followed = new FollowedContext(context, opened, {
      write: this.writeEntry,
      tabIdOf: this.options.tabIdOf,
      console: (message) => this.console(message),
      pageError: (error) => this.pageError(error),
    });
    this.followed = followed;
    await Promise.all([this.trace.start(context), followed.ready()]);
  }

  /** A tab is about to open that no page of the computer asked for (a CDP client's). */
  expectTab(): void {
    this.followed?.expectTab();
  }

  /** Resolves once a page's requests are recorded (before Benchtop itself loads anything in it). */
  async watching(page: Page): Promise<void> {
    await this.followed?.watch(page);
  }

  /**
   * Ends the recording (before the context closes): the HAR is flushed; trace.zip is written
   * after (the sink's finishLater), so the computer's end does not wait for it.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.leave();
      await new Promise<void>((resolve) => this.har.end(resolve));
      this.sink.finishLater(
        this.trace.write().catch(() => {
          // No trace.zip then; the parts stay for recoverTrace.
        }),
      );
    })();
    return this.stopped;
  }

  private async leave(): Promise<void> {
    const followed = this.followed;
    this.followed = undefined;
    if (followed) await Promise.all([followed.leave(), this.trace.end(followed.context)]);
  }

  private readonly writeEntry = (entry: HarEntry): void => {
    if (this.har.writable) this.har.write(`${this.sink.scrub(JSON.stringify(entry))}\n`);
  };

  private console(message: ConsoleMessage): void {
    const page = message.page();
    this.sink.console({
      level: message.type(),
      text: message.text(),
      url: message.location().url || null,
      tabId: page ? (this.options.tabIdOf(page) ?? null) : null,
    });
    // Each argument is a handle Playwright keeps until the page navigates away: a page logging
    // in a loop would fill Benchtop's memory (≈180 MB for 20,000 messages).
    for (const arg of message.args()) arg.dispose().catch(() => {});
  }

  private pageError(webError: WebError): void {
    const page = webError.page();
    const error = webError.error();
    const text = error.stack?.includes(error.message)
      ? error.stack
      : `${error.name}: ${error.message}`;
    this.sink.console({
      level: 'pageerror',
      text,
      url: /\b(https?:\/\/[^\s()]+?):\d+:\d+/.exec(error.stack ?? '')?.[1] ?? null,
      tabId: page ? (this.options.tabIdOf(page) ?? null) : null,
    });
  }
}

/** A page's network session made before the page was handed out (openNetworkSession). */
export type OpenedSession = { page: Page; session: CDPSession };

type FollowedDeps = {
  write: (entry: HarEntry) => void;
  tabIdOf: (page: Page) => string | undefined;
  console: (message: ConsoleMessage) => void;
  pageError: (error: WebError) => void;
};

/** One context's pages as they are recorded: a network session each, console and errors. */
class FollowedContext {
  private readonly networks = new Map<Page, Promise<PageNetwork | undefined>>();
  /** The sessions that listen already. */
  private readonly listening = new Map<Page, PageNetwork>();
  private readonly opening: OpeningTabs;
  private tracking = false;

  constructor(
    readonly context: BrowserContext,
    private opened: OpenedSession | undefined,
    private readonly deps: FollowedDeps,
  ) {
    this.opening = new OpeningTabs(context, {
      networkOf: (page) => this.listening.get(page),
      track: (on) => {
        this.tracking = on;
        for (const network of this.listening.values()) network.track(on);
      },
      pageref: deps.tabIdOf,
      write: deps.write,
    });
    context.on('page', this.watch);
    context.on('console', deps.console);
    context.on('weberror', deps.pageError);
    for (const page of context.pages()) void this.watch(page);
  }

  /** Follows a page's requests (once); resolves when its session listens. */
  readonly watch = (page: Page): Promise<PageNetwork | undefined> => {
    const known = this.networks.get(page);
    if (known) return known;
    const opened = this.opened?.page === page ? this.opened.session : undefined;
    this.opened = undefined;
    const network = PageNetwork.watch(
      this.context,
      page,
      {
        write: this.deps.write,
        pageref: pageref(page, this.deps.tabIdOf),
        onWindowOpen: () => this.opening.expect(),
        tracking: this.tracking,
      },
      opened,
    ).then((watched) => {
      if (watched && this.networks.get(page) === network) {
        watched.track(this.tracking);
        this.listening.set(page, watched);
        this.opening.listening(page);
      }
      return watched;
    });
    this.networks.set(page, network);
    page.once('close', () => {
      if (this.networks.get(page) !== network) return;
      this.networks.delete(page);
      this.listening.delete(page);
      void network.then((watched) => watched?.stop());
    });
    return network;
  };

  async ready(): Promise<void> {
    await Promise.all(this.networks.values());
  }

  expectTab(): void {
    this.opening.expect();
  }

  /** Stops following the context; the requests still open are written as incomplete. */
  async leave(): Promise<void> {
    this.context.off('page', this.watch);
    this.context.off('console', this.deps.console);
    this.context.off('weberror', this.deps.pageError);
    this.opening.stop();
    const networks = [...this.networks.values()];
    this.networks.clear();
    this.listening.clear();
    // A page stuck in a load that never answers may never answer its session either (seen with
    // a navigation cancelled mid-way): its requests are written as incomplete all the same, and
    // the context's close right after ends the session.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(networks.map(async (network) => (await network)?.stop())),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, LEAVE_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }
}

/** A page's tab id for its HAR entries, remembered once known (it outlives the tab's closing). */
function pageref(
  page: Page,
  tabIdOf: (page: Page) => string | undefined,
): () => string | undefined {
  let id: string | undefined;
  return () => (id ??= tabIdOf(page));
}
