import { invalidRequest } from '../errors.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { ImageData } from './model-provider.js';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
/** Enough for the newest screenshots of a few conversations at once. */
const RECENT_IMAGES = 16;
const LOCAL_PATH = /^\/screenshots\/([^/]+)\/([^/]+)$/;
const DATA_URL = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,(.*)$/s;

const SIGNATURES: Array<[string, number[]]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['image/webp', [0x52, 0x49, 0x46, 0x46]],
];

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

/**
 * Turns an image_url into bytes for a model: this server's own screenshot URLs from disk (no
 * HTTP round trip to itself), data: URLs decoded, other http(s) URLs fetched with a size cap and
 * a timeout. A bad image is a 400 naming the item it came from.
 */
export class ImageResolver {
  /** Screenshot URLs never change what they point at: a chain re-sends the same few each turn. */
  private readonly recent = new Map<string, ImageData>();

  constructor(
    private readonly screenshots: ScreenshotStore,
    private readonly baseUrl: () => string,
  ) {}

  async resolve(url: string, param: string): Promise<ImageData> {
    const cached = this.recent.get(url);
    if (cached) return cached;
    const bytes = await this.load(url, param);
    const mediaType = sniffImage(bytes);
    if (!mediaType) {
      throw invalidRequest(`${param} is not a PNG, JPEG, GIF or WebP image`, param);
    }
    const image = { mediaType, base64: bytes.toString('base64') };
    if (this.isLocal(url)) this.remember(url, image);
    return image;
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

  private async load(url: string, param: string): Promise<Buffer> {
    if (url.startsWith('data:')) return decodeDataUrl(url, param);
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
      return png;
    }
    return fetchImage(parsed, param);
  }

  private localScreenshot(url: URL): { computer: string; file: string } | undefined {
    const base = new URL(this.baseUrl());
    if (url.origin !== base.origin && !isLoopbackAlias(url, base)) return undefined;
    const prefix = base.pathname.replace(/\/$/, '');
    if (!url.pathname.startsWith(`${prefix}/screenshots/`)) return undefined;
    const match = LOCAL_PATH.exec(url.pathname.slice(prefix.length));
    return match ? { computer: match[1]!, file: match[2]! } : undefined;
  }
}

/** localhost and 127.0.0.1 on our port are the same server. */
function isLoopbackAlias(url: URL, base: URL): boolean {
  const loopback = new Set(['localhost', '127.0.0.1', '[::1]']);
  return url.port === base.port && loopback.has(url.hostname) && loopback.has(base.hostname);
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

async function fetchImage(url: URL, param: string): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, {
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      redirect: 'follow',
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw invalidRequest(
      timedOut
        ? `${param}: ${url.origin} did not send the image within ${FETCH_TIMEOUT_MS / 1000} s`
        : `${param}: could not fetch the image from ${url.origin} (${cause ?? (error as Error).message})`,
      param,
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw invalidRequest(`${param}: fetching the image answered HTTP ${response.status}`, param);
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_IMAGE_BYTES) {
    await response.body?.cancel();
    throw invalidRequest(`${param}: the image is larger than ${MAX_IMAGE_BYTES >> 20} MiB`, param);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_IMAGE_BYTES) {
      throw invalidRequest(
        `${param}: the image is larger than ${MAX_IMAGE_BYTES >> 20} MiB`,
        param,
      );
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
