import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import packageJson from '../../../../../package.json' with { type: 'json' };

/** The HAR of a recorded browser: one HAR 1.2 entry per line, appended as requests finish. */
export const HAR_LOG = 'har.ndjson';

/** Request bodies are kept up to this many bytes. */
export const POST_DATA_CAP = 64 * 1024;

/** Headers whose values never reach a recording. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
export const REDACTED = '[redacted]';

type Header = { name: string; value: string };
type Timings = {
  blocked: number;
  dns: number;
  connect: number;
  ssl: number;
  send: number;
  wait: number;
  receive: number;
};

/** One HAR 1.2 entry (the `_` fields are the extensions Chrome and Playwright write too). */
export type HarEntry = {
  pageref?: string;
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: [];
    headers: Header[];
    queryString: Header[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: [];
    headers: Header[];
    content: { size: number; mimeType: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    _transferSize?: number;
  };
  cache: Record<string, never>;
  timings: Timings;
  serverIPAddress?: string;
  connection?: string;
  _resourceType?: string;
  _fromCache?: 'memory' | 'disk';
  _failureText?: string;
  /** Written when the recording stopped before the request finished. */
  _incomplete?: true;
};

/** What Chromium's DevTools protocol reports of one request hop (Network domain events). */
export type RequestHop = {
  pageref: string | undefined;
  /** Network.requestWillBeSent: monotonic seconds, and seconds since the epoch. */
  timestamp: number;
  wallTime: number;
  request: {
    url: string;
    method: string;
    headers: Record<string, string>;
    postData?: string;
    hasPostData?: boolean;
  };
  resourceType?: string;
  /** The headers as sent (Network.requestWillBeSentExtraInfo), cookies included. */
  sentHeaders?: Record<string, string>;
  response?: {
    status: number;
    statusText: string;
    headers: Record<string, string>;
    mimeType: string;
    protocol?: string;
    remoteIPAddress?: string;
    connectionId?: number;
    fromDiskCache?: boolean;
    encodedDataLength: number;
    timing?: {
      requestTime: number;
      dnsStart: number;
      dnsEnd: number;
      connectStart: number;
      connectEnd: number;
      sslStart: number;
      sslEnd: number;
      sendStart: number;
      sendEnd: number;
      receiveHeadersEnd: number;
    };
  };
  /** The headers as received (Network.responseReceivedExtraInfo). */
  receivedHeaders?: { headers: Record<string, string>; headersText?: string; statusCode: number };
  fromMemoryCache?: boolean;
  /** Decoded bytes of the body (Network.dataReceived). */
  dataLength: number;
};

/** How a hop ended: finished, failed, redirected, or cut off by the end of the recording. */
export type HopEnd =
  | { kind: 'finished'; timestamp: number; encodedDataLength: number }
  | { kind: 'failed'; timestamp: number; errorText: string }
  | { kind: 'redirected'; timestamp: number; response: NonNullable<RequestHop['response']> }
  | { kind: 'incomplete' };

/** The HAR entry of a hop; header values that carry credentials are replaced by [redacted]. */
export function harEntry(hop: RequestHop, end: HopEnd): HarEntry {
  const response = end.kind === 'redirected' ? end.response : hop.response;
  const protocol = httpVersion(response?.protocol);
  const endTimestamp = end.kind === 'incomplete' ? undefined : end.timestamp;
  const total = endTimestamp === undefined ? 0 : ms(endTimestamp - hop.timestamp);
  const timings = hopTimings(hop, response, total);
  const location = response && headerValue(response.headers, 'location');
  const received = hop.receivedHeaders;
  const bodySize =
    end.kind === 'finished' && response
      ? Math.max(0, end.encodedDataLength - response.encodedDataLength)
      : -1;
  const entry: HarEntry = {
    startedDateTime: new Date(hop.wallTime * 1000).toISOString(),
    time: total,
    request: {
      method: hop.request.method,
      url: hop.request.url,
      httpVersion: protocol,
      cookies: [],
      headers: headerList(hop.sentHeaders ?? hop.request.headers),
      queryString: queryString(hop.request.url),
      headersSize: -1,
      bodySize: hop.request.postData === undefined ? 0 : Buffer.byteLength(hop.request.postData),
    },
    response: {
      status: response?.status ?? 0,
      statusText: response?.statusText ?? '',
      httpVersion: protocol,
      cookies: [],
      headers: headerList(received?.headers ?? response?.headers ?? {}),
      content: {
        size: end.kind === 'redirected' ? 0 : hop.dataLength,
        mimeType: response?.mimeType || 'x-unknown',
      },
      redirectURL: location ? resolveUrl(location, hop.request.url) : '',
      headersSize: received?.headersText ? Buffer.byteLength(received.headersText) : -1,
      bodySize,
    },
    cache: {},
    timings,
  };
  if (end.kind === 'finished') entry.response._transferSize = end.encodedDataLength;
  const postData = postDataOf(hop);
  if (postData) entry.request.postData = postData;
  if (hop.pageref) entry.pageref = hop.pageref;
  if (response?.remoteIPAddress) entry.serverIPAddress = response.remoteIPAddress;
  if (response?.connectionId !== undefined) entry.connection = String(response.connectionId);
  if (hop.resourceType) entry._resourceType = hop.resourceType.toLowerCase();
  if (hop.fromMemoryCache) entry._fromCache = 'memory';
  else if (response?.fromDiskCache) entry._fromCache = 'disk';
  if (end.kind === 'failed') entry._failureText = end.errorText;
  if (end.kind === 'incomplete') entry._incomplete = true;
  return entry;
}

function postDataOf(hop: RequestHop): HarEntry['request']['postData'] {
  const { postData, hasPostData } = hop.request;
  if (postData === undefined && !hasPostData) return undefined;
  const mimeType = headerValue(hop.request.headers, 'content-type') ?? '';
  if (postData === undefined) {
    // Chromium leaves out bodies above the size asked for (Network.enable's maxPostDataSize).
    return { mimeType, text: '', comment: `not recorded: larger than ${POST_DATA_CAP} bytes` };
  }
  const bytes = Buffer.from(postData);
  if (bytes.length <= POST_DATA_CAP) return { mimeType, text: postData };
  return {
    mimeType,
    text: bytes.subarray(0, POST_DATA_CAP).toString(),
    comment: `truncated to ${POST_DATA_CAP} of ${bytes.length} bytes`,
  };
}

/**
 * HAR timings from Chromium's resource timing (milliseconds after `requestTime`, -1 when a phase
 * did not happen); what is left of the total before the request was sent counts as blocked.
 */
function hopTimings(hop: RequestHop, response: RequestHop['response'], total: number): Timings {
  const timing = response?.timing;
  if (!timing) {
    return { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: -1, receive: -1 };
  }
  const span = (start: number, end: number) => (start >= 0 && end >= start ? end - start : -1);
  const dns = span(timing.dnsStart, timing.dnsEnd);
  const connect = span(timing.connectStart, timing.connectEnd);
  const ssl = span(timing.sslStart, timing.sslEnd);
  const send = Math.max(0, span(timing.sendStart, timing.sendEnd));
  const wait = span(timing.sendEnd, timing.receiveHeadersEnd);
  const headersAt = ms(timing.requestTime - hop.timestamp) + timing.receiveHeadersEnd;
  const receive = total > 0 ? Math.max(0, total - headersAt) : -1;
  // HAR counts ssl inside connect, so it is not added again.
  const counted = [dns, connect, send, wait, receive].reduce((sum, t) => sum + Math.max(0, t), 0);
  return {
    blocked: total > counted ? round(total - counted) : -1,
    dns: round(dns),
    connect: round(connect),
    ssl: round(ssl),
    send: round(send),
    wait: round(wait),
    receive: round(receive),
  };
}

function ms(seconds: number): number {
  return round(seconds * 1000);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function httpVersion(protocol: string | undefined): string {
  if (!protocol) return 'HTTP/1.1';
  return /^http\//i.test(protocol) ? protocol.toUpperCase() : protocol;
}

/** DevTools joins repeated headers (Set-Cookie) with line breaks; HAR lists each. */
function headerList(headers: Record<string, string>): Header[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    SECRET_HEADERS.has(name.toLowerCase())
      ? [{ name, value: REDACTED }]
      : value.split('\n').map((line) => ({ name, value: line })),
  );
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

function queryString(url: string): Header[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

function resolveUrl(location: string, base: string): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

/**
 * Streams the HAR 1.2 document of a recording from its har.ndjson (as it is now: lines appended
 * while this reads are left for the next call; a line torn by a kill is skipped), then ends
 * `out`. Pages are the computer's tabs.
 */
export async function writeHar(dir: string, out: Writable): Promise<void> {
  const file = join(dir, HAR_LOG);
  const size = await stat(file).then(
    (info) => info.size,
    () => 0,
  );
  const pages = new Map<string, { startedDateTime: string; title: string }>();
  for await (const { entry } of entriesOf(file, size)) {
    if (!entry.pageref) continue;
    const page = pages.get(entry.pageref);
    const loaded = entry._resourceType === 'document' ? entry.request.url : undefined;
    if (!page) {
      pages.set(entry.pageref, {
        startedDateTime: entry.startedDateTime,
        title: loaded ?? entry.request.url,
      });
    } else if (entry.startedDateTime < page.startedDateTime) {
      page.startedDateTime = entry.startedDateTime;
      if (loaded) page.title = loaded;
    }
  }
  const head = {
    version: '1.2',
    creator: { name: 'Benchtop', version: packageJson.version },
    pages: [...pages].map(([id, page]) => ({
      startedDateTime: page.startedDateTime,
      id,
      title: page.title,
      pageTimings: { onContentLoad: -1, onLoad: -1 },
    })),
  };
  async function* harDocument(): AsyncGenerator<string> {
    // One entry a line, so what reads it line by line (a scrubber) sees whole entries.
    yield `{"log":${JSON.stringify(head).slice(0, -1)},"entries":[`;
    let first = true;
    for await (const { line } of entriesOf(file, size)) {
      yield `${first ? '' : ','}\n${line}`;
      first = false;
    }
    yield '\n]}}\n';
  }
  await pipeline(harDocument, out);
}

/** The whole, parseable lines of the first `size` bytes of har.ndjson. */
async function* entriesOf(
  file: string,
  size: number,
): AsyncGenerator<{ line: string; entry: HarEntry }> {
  if (size === 0) return;
  const lines = createInterface({
    input: createReadStream(file, { start: 0, end: size - 1 }),
    crlfDelay: Infinity,
  });
  for await (const line of lines) {
    const entry = parseEntry(line);
    if (entry) yield { line, entry };
  }
}

function parseEntry(line: string): HarEntry | undefined {
  if (!line.trim()) return undefined;
  try {
    const entry = JSON.parse(line) as HarEntry;
    return typeof entry === 'object' && entry !== null && typeof entry.request?.url === 'string'
      ? entry
      : undefined;
  } catch {
    return undefined;
  }
}
