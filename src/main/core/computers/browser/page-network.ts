import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { harEntry, POST_DATA_CAP, type HarEntry, type HopEnd, type RequestHop } from './har.js';

/** Requests still open at once on one page beyond which the oldest is written as incomplete. */
const MAX_OPEN = 1000;
/** Starts of requests remembered while tracking (see track), the newest. */
const MAX_SEEN = 5000;

type Headers = Record<string, string>;
type Received = NonNullable<RequestHop['receivedHeaders']>;

/**
 * One request as DevTools reports it: a hop per redirect, and the headers as sent and received
 * ("extra info" events), which come in their own order (a redirect's after the next hop began),
 * so they are matched to the hops when the request ends.
 */
type Chain = {
  hops: Array<{ hop: RequestHop; end?: HopEnd }>;
  sent: Headers[];
  received: Received[];
};

export type PageNetworkOptions = {
  write: (entry: HarEntry) => void;
  /** The page's tab id, for the entries' pageref. */
  pageref: () => string | undefined;
  /** The page is about to open a tab (window.open, a link to a new window). */
  onWindowOpen: () => void;
};

/**
 * The requests of one page as HAR entries, from a DevTools protocol session of its own (Network
 * domain events, no round trips). Playwright's request events would do, but each request they
 * report stays alive in Benchtop's memory (≈17 kB, up to ten thousand of them) and costs the
 * page more. A session only sees what starts once it listens (see OpeningTabs for the first
 * load of a tab a site opens); requests of out-of-process iframes and workers run in targets of
 * their own, which it does not see.
 */
export class PageNetwork {
  private readonly chains = new Map<string, Chain>();
  /** Starts of the requests seen while tracking, by startKey. */
  private seen: Set<string> | undefined;

  private constructor(
    private readonly session: CDPSession,
    private readonly options: PageNetworkOptions,
  ) {
    session.on('Page.windowOpen', () => options.onWindowOpen());
    session.on('Network.requestWillBeSent', (event) => {
      const chain = this.chain(event.requestId);
      const last = chain.hops.at(-1);
      if (last && !last.end && event.redirectResponse) {
        last.end = {
          kind: 'redirected',
          timestamp: event.timestamp,
          response: event.redirectResponse,
        };
      }
      const { url, method, headers, postData, hasPostData, postDataEntries } = event.request;
      this.remember(startKey(url, event.wallTime * 1000));
      chain.hops.push({
        hop: {
          pageref: options.pageref(),
          timestamp: event.timestamp,
          wallTime: event.wallTime,
          request: {
            url,
            method,
            headers,
            postData: postData ?? joined(postDataEntries),
            hasPostData,
          },
          resourceType: event.type,
          dataLength: 0,
        },
      });
    });
    session.on('Network.requestWillBeSentExtraInfo', ({ requestId, headers }) => {
      this.chain(requestId).sent.push(headers);
    });
    session.on('Network.responseReceived', ({ requestId, response, type }) => {
      const hop = this.current(requestId);
      if (!hop) return;
      hop.response = response;
      hop.resourceType = type;
    });
    session.on(
      'Network.responseReceivedExtraInfo',
      ({ requestId, headers, headersText, statusCode }) => {
        this.chain(requestId).received.push({ headers, headersText, statusCode });
      },
    );
    session.on('Network.requestServedFromCache', ({ requestId }) => {
      const hop = this.current(requestId);
      if (hop) hop.fromMemoryCache = true;
    });
    session.on('Network.dataReceived', ({ requestId, dataLength }) => {
      const hop = this.current(requestId);
      if (hop) hop.dataLength += dataLength;
    });
    session.on('Network.loadingFinished', ({ requestId, timestamp, encodedDataLength }) => {
      this.end(requestId, { kind: 'finished', timestamp, encodedDataLength });
    });
    session.on('Network.loadingFailed', ({ requestId, timestamp, errorText }) => {
      this.end(requestId, { kind: 'failed', timestamp, errorText });
    });
  }

  /**
   * Starts following a page's requests; undefined when the page went away meanwhile. `opened`:
   * the page's session from openNetworkSession, made before anything loaded in it (a page of
   * the warm pool).
   */
  static async watch(
    context: BrowserContext,
    page: Page,
    options: PageNetworkOptions & { tracking: boolean },
    opened?: CDPSession,
  ): Promise<PageNetwork | undefined> {
    try {
      const session = opened ?? (await context.newCDPSession(page));
      const network = new PageNetwork(session, options);
      network.track(options.tracking);
      if (!opened) await enable(session);
      return network;
    } catch {
      return undefined;
    }
  }

  /** Remembers (or stops remembering) which requests this session saw start: see saw(). */
  track(on: boolean): void {
    this.seen = on ? (this.seen ?? new Set()) : undefined;
  }

  /** Whether this session saw a request start while tracking (by its URL and wall-clock start). */
  saw(url: string, startMs: number): boolean {
    return this.seen?.has(startKey(url, startMs)) ?? false;
  }

  private remember(key: string): void {
    if (!this.seen) return;
    this.seen.add(key);
    if (this.seen.size > MAX_SEEN) this.seen.delete(this.seen.values().next().value!);
  }

  /** Writes the requests still open as incomplete entries and stops following the page. */
  /**
   * Writes the requests still open as incomplete and lets the session go (not waited for: the
   * context it belongs to is closed next, which ends it all the same).
   */
  stop(): void {
    for (const id of [...this.chains.keys()]) this.end(id, { kind: 'incomplete' });
    this.session.detach().catch(() => {
      // The page closed: the session went with it.
    });
  }

  private chain(id: string): Chain {
    let chain = this.chains.get(id);
    if (!chain) {
      chain = { hops: [], sent: [], received: [] };
      this.chains.set(id, chain);
      // Requests that never end here (an iframe's document finishes in the iframe's own target).
      if (this.chains.size > MAX_OPEN)
        this.end(this.chains.keys().next().value!, { kind: 'incomplete' });
    }
    return chain;
  }

  private current(id: string): RequestHop | undefined {
    const last = this.chains.get(id)?.hops.at(-1);
    return last && !last.end ? last.hop : undefined;
  }

  /** Ends a request's last hop and writes all its hops. */
  private end(id: string, end: HopEnd): void {
    const chain = this.chains.get(id);
    if (!chain) return;
    this.chains.delete(id);
    for (const [index, { hop, end: ended }] of chain.hops.entries()) {
      hop.sentHeaders = chain.sent[index];
      const status = (ended?.kind === 'redirected' ? ended.response : hop.response)?.status;
      const match = chain.received.findIndex((received) => received.statusCode === status);
      if (match >= 0) hop.receivedHeaders = chain.received.splice(match, 1)[0];
      this.options.write(harEntry(hop, ended ?? end));
    }
  }
}

/** A request by its URL and start (the wall time Chromium reports, which Playwright passes on). */
function startKey(url: string, startMs: number): string {
  return `${Math.round(startMs * 1000)} ${url}`;
}

/** Chromium's newer form of a request body: its parts, base64. */
function joined(entries: Array<{ bytes?: string }> | undefined): string | undefined {
  if (!entries?.length) return undefined;
  return Buffer.concat(entries.map((entry) => Buffer.from(entry.bytes ?? '', 'base64'))).toString();
}

/** A page's session with what PageNetwork listens to switched on. */
export async function openNetworkSession(context: BrowserContext, page: Page): Promise<CDPSession> {
  const session = await context.newCDPSession(page);
  await enable(session);
  return session;
}

async function enable(session: CDPSession): Promise<void> {
  await Promise.all([
    session.send('Network.enable', {
      // Nothing is kept for this session to read back: it never asks for bodies.
      maxTotalBufferSize: 0,
      maxResourceBufferSize: 0,
      maxPostDataSize: POST_DATA_CAP,
    }),
    session.send('Page.enable'),
  ]);
}
