import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { BenchtopError, invalidRequest } from '../errors.js';
import { listensEverywhere, type Settings } from '../config.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { ImageData } from './model-provider.js';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** Enough for the newest screenshots of a few conversations at once. */
const RECENT_IMAGES = 16;
/** Images of one request fetched at once: enough to hide latency, few enough to bound sockets. */
const FETCHES_AT_ONCE = 4;
const MAX_REDIRECTS = 5;
const LOCAL_PATH = /^\/screenshots\/([^/]+)\/([^/]+)$/;
const DATA_URL = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,(.*)$/s;
const MIB = 1024 * 1024;

const SIGNATURES: Array<[string, number[]]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['image/webp', [0x52, 0x49, 0x46, 0x46]],
];

/** Addresses that reach this machine whatever its interfaces: loopback and "any". */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('0.0.0.0', 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** What the bytes are, by their first bytes; undefined when they are no image we can send. */
export function sniffImage(bytes: Buffer): string | undefined {
  for (const [type, signature] of SIGNATURES) {
    if (signature.every((byte, index) => bytes[index] === byte)) {
      if (type === 'image/webp' && bytes.subarray(8, 12).toString('latin1') !== 'WEBP') continue;
      return type;
    }
  }
  return undefined;
}

/** One image a request refers to; an optional one (an earlier turn's) may be left out. */
export type ImageRequest = { url: string; param: string; required: boolean };

type ImageSettings = {
  server: Pick<Settings['server'], 'host' | 'allowed_hosts'>;
  limits: Settings['limits'];
};

/** The bytes one request may still load; shared by its images as they arrive. */
class ByteBudget {
  private left: number;

  constructor(private readonly limit: number) {
    this.left = limit;
  }

  /** Throws the request's 400 when `bytes` more would not fit. */
  check(bytes: number, param: string): void {
    if (bytes <= this.left) return;
    throw invalidRequest(
      `${param}: the images of this request add up to more than ${formatBytes(this.limit)}; send fewer or smaller images, or raise limits.image_bytes_per_request`,
      param,
    );
  }

  take(bytes: number, param: string): void {
    this.check(bytes, param);
    this.left -= bytes;
  }

  give(bytes: number): void {
    this.left += bytes;
  }
}

/** One image's share of its request: the byte budget, the abort signal, the fetch timeout. */
type Load = {
  take: (bytes: number) => void;
  check: (bytes: number) => void;
  signal: AbortSignal;
  timeoutMs: number;
};

/**
 * Turns image_urls into bytes for a model: this server's own screenshot URLs from disk (no
 * HTTP round trip to itself), data: URLs decoded, other http(s) URLs fetched with a size cap and
 * a timeout. Any other URL of this server is refused rather than fetched: the fetch would carry
 * no key and count as a failed authentication of this machine's address. A request's images are
 * capped in number and total bytes and fetched a few at a time, so one request cannot take the
 * server's memory. A bad image is a 400 naming the item it came from.
 */
export class ImageResolver {
  /** Screenshot URLs never change what they point at: a chain re-sends the same few each turn. */
  private readonly recent = new Map<string, ImageData>();

  constructor(
    private readonly screenshots: ScreenshotStore,
    private readonly baseUrl: () => string,
    private readonly settings: ImageSettings,
  ) {}

  /**
   * Loads a request's images, in the order given. Every required image must load (the first
   * that cannot throws its 400, and the others stop); an optional one that cannot load, or no
   * longer fits in the request's byte budget, is null. Required images load first, so an
   * optional one never takes the budget from one the request needs.
   */
  async resolveAll(requests: ImageRequest[]): Promise<Array<ImageData | null>> {
    const { limits } = this.settings;
    const required = requests.filter((request) => request.required);
    if (required.length > limits.images_per_request) {
      const param = required[limits.images_per_request]!.param;
      throw invalidRequest(
        `${param}: this request sends ${required.length} images, more than limits.images_per_request (${limits.images_per_request}) allows; send fewer or raise limits.images_per_request`,
        param,
      );
    }
    const results: Array<ImageData | null> = requests.map(() => null);
    const budget = new ByteBudget(limits.image_bytes_per_request);
    const timeoutMs = limits.image_fetch_timeout_seconds * 1000;
    const indexes = requests.map((_, index) => index);
    const stop = new AbortController();
    try {
      await atMost(
        indexes.filter((index) => requests[index]!.required),
        stop.signal,
        async (index) => {
          const { url, param } = requests[index]!;
          try {
            results[index] = await this.resolve(url, param, budget, stop.signal, timeoutMs);
          } catch (error) {
            // The request fails with this image's 400: the others need not finish downloading.
            stop.abort();
            throw error;
          }
        },
      );
    } finally {
      stop.abort();
    }
    const never = new AbortController().signal;
    await atMost(
      indexes.filter((index) => !requests[index]!.required),
      never,
      async (index) => {
        const { url, param } = requests[index]!;
        results[index] = await this.resolve(url, param, budget, never, timeoutMs).catch(() => null);
      },
    );
    return results;
  }

  private async resolve(
    url: string,
    param: string,
    budget: ByteBudget,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ImageData> {
    let taken = 0;
    const load: Load = {
      take: (bytes) => {
        budget.take(bytes, param);
        taken += bytes;
      },
      check: (bytes) => budget.check(bytes, param),
      signal,
      timeoutMs,
    };
    try {
      const cached = this.recent.get(url);
      if (cached) {
        load.take(Buffer.byteLength(cached.base64, 'base64'));
        return cached;
      }
      const bytes = await this.load(url, param, load);
      const mediaType = sniffImage(bytes);
      if (!mediaType) {
        throw invalidRequest(`${param} is not a PNG, JPEG, GIF or WebP image`, param);
      }
      const image = { mediaType, base64: bytes.toString('base64') };
      if (this.isLocal(url)) this.remember(url, image);
      return image;
    } catch (error) {
      // An optional image left out gives its bytes back to the others.
      budget.give(taken);
      throw error;
    }
  }

  private isLocal(url: string): boolean {
    try {
      return this.localScreenshot(new URL(url)) !== undefined;
    } catch {
      return false;
    }
  }

  private remember(url: string, image: ImageData): void {
    this.recent.set(url, image);
    if (this.recent.size > RECENT_IMAGES) this.recent.delete(this.recent.keys().next().value!);
  }

  private async load(url: string, param: string, load: Load): Promise<Buffer> {
    if (url.startsWith('data:')) {
      const bytes = decodeDataUrl(url, param);
      load.take(bytes.length);
      return bytes;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidRequest(`${param} must be an http(s) or data: URL`, param);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw invalidRequest(`${param} must be an http(s) or data: URL`, param);
    }
    const local = this.localScreenshot(parsed);
    if (local) {
      const png = await this.screenshots.read(local.computer, local.file);
      if (!png) {
        throw invalidRequest(
          `${param}: that screenshot no longer exists (screenshots expire ten minutes after their computer ends); take a new one`,
          param,
        );
      }
      load.take(png.length);
      return png;
    }
    if (this.isSelf(parsed)) throw selfUrl(param, parsed);
    return this.fetchImage(parsed, param, load);
  }

  private localScreenshot(url: URL): { computer: string; file: string } | undefined {
    if (!this.isSelf(url)) return undefined;
    const prefix = new URL(this.baseUrl()).pathname.replace(/\/$/, '');
    if (!url.pathname.startsWith(`${prefix}/screenshots/`)) return undefined;
    const match = LOCAL_PATH.exec(url.pathname.slice(prefix.length));
    return match ? { computer: match[1]!, file: match[2]! } : undefined;
  }

  /**
   * Whether a URL names this server: on its port, its own host, one of server.allowed_hosts (the
   * names its Host check accepts), a loopback address, or, when it listens on every interface,
   * any address of this machine.
   */
  private isSelf(url: URL): boolean {
    const base = new URL(this.baseUrl());
    if (portOf(url) !== portOf(base)) return false;
    const host = bare(url.hostname);
    const listening = bare(base.hostname);
    const names = new Set([listening, ...this.settings.server.allowed_hosts.map(bare)]);
    if (names.has(host) || host === 'localhost' || host.endsWith('.localhost')) return true;
    const family = isIP(host);
    if (family === 0) return false;
    if (LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6')) return true;
    // The base URL names 127.0.0.1 then: the setting says it listens everywhere.
    if (!listensEverywhere(this.settings.server.host)) return false;
    return Object.values(networkInterfaces()).some((addresses) =>
      addresses?.some((address) => bare(address.address) === host),
    );
  }

  /**
   * Fetches an image with a deadline for the whole of it (redirects, headers and body), following
   * redirects itself so that none leads back to this server.
   */
  private async fetchImage(url: URL, param: string, load: Load): Promise<Buffer> {
    const timeout = AbortSignal.timeout(load.timeoutMs);
    const signal = AbortSignal.any([timeout, load.signal]);
    const failed = (error: unknown, what: string): BenchtopError => {
      if (error instanceof BenchtopError) return error;
      if (timeout.aborted) {
        return invalidRequest(
          `${param}: ${url.origin} did not send the whole image within ${load.timeoutMs / 1000} s; check that the image URL answers, or raise limits.image_fetch_timeout_seconds`,
          param,
        );
      }
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return invalidRequest(`${param}: ${what} (${cause ?? (error as Error).message})`, param);
    };
    let response: Response;
    try {
      response = await this.follow(url, param, signal);
    } catch (error) {
      throw failed(error, `could not fetch the image from ${url.origin}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw invalidRequest(`${param}: fetching the image answered HTTP ${response.status}`, param);
    }
    try {
      const declared = Number(response.headers.get('content-length'));
      if (declared > MAX_IMAGE_BYTES) throw tooLarge(param);
      // Refused before any byte is read when it cannot fit in what the request has left.
      if (declared > 0) load.check(declared);
      const chunks: Buffer[] = [];
      let size = 0;
      const body = (response.body ?? []) as unknown as AsyncIterable<Uint8Array>;
      for await (const chunk of body) {
        size += chunk.length;
        if (size > MAX_IMAGE_BYTES) throw tooLarge(param);
        load.take(chunk.length);
        chunks.push(Buffer.from(chunk));
      }
      return Buffer.concat(chunks);
    } catch (error) {
      await response.body?.cancel().catch(() => {});
      throw failed(error, `${url.origin} broke off sending the image`);
    }
  }

  private async follow(start: URL, param: string, signal: AbortSignal): Promise<Response> {
    let url = start;
    for (let hops = 0; ; hops++) {
      const response = await fetch(url, { signal, redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status > 399 || !location) return response;
      await response.body?.cancel();
      if (hops === MAX_REDIRECTS) {
        throw invalidRequest(
          `${param}: ${start.origin} redirected more than ${MAX_REDIRECTS} times; send the image's final URL`,
          param,
        );
      }
      url = new URL(location, url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw invalidRequest(
          `${param}: ${start.origin} redirected to a URL that is not http(s)`,
          param,
        );
      }
      if (this.isSelf(url)) throw selfUrl(param, url);
    }
  }
}

function selfUrl(param: string, url: URL): BenchtopError {
  return invalidRequest(
    `${param}: ${url.origin}${url.pathname} is this Benchtop server itself, whose only images are its screenshot URLs (/screenshots/…); send a screenshot URL or the image as a data: URL`,
    param,
  );
}

function tooLarge(param: string): BenchtopError {
  return invalidRequest(`${param}: the image is larger than ${MAX_IMAGE_BYTES / MIB} MiB`, param);
}

function formatBytes(bytes: number): string {
  return bytes >= MIB ? `${+(bytes / MIB).toFixed(1)} MiB` : `${bytes} bytes`;
}

/** A host name without IPv6 brackets, lower case: "[::1]" → "::1". */
function bare(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/** Runs work on each item, at most FETCHES_AT_ONCE at a time; stops taking items once aborted. */
async function atMost<T>(
  items: T[],
  signal: AbortSignal,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(FETCHES_AT_ONCE, items.length) }, worker));
}

function decodeDataUrl(url: string, param: string): Buffer {
  const match = DATA_URL.exec(url);
  if (!match) {
    throw invalidRequest(`${param} is not a base64 data: URL (data:image/png;base64,…)`, param);
  }
  const bytes = Buffer.from(match[3]!, 'base64');
  if (bytes.length === 0) throw invalidRequest(`${param} holds no image data`, param);
  return bytes;
}
