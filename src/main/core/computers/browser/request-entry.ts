import type { Request } from 'playwright-core';
import { harEntry, type HarEntry, type HopEnd, type RequestHop } from './har.js';

/**
 * The HAR entry of a request Playwright saw, once it ended: for what a page loaded before its
 * own DevTools session listened (a tab a site opens starts loading before Benchtop learns of
 * it). Undefined when Playwright no longer has it.
 */
export async function requestEntry(
  request: Request,
  pageref: string | undefined,
): Promise<HarEntry | undefined> {
  try {
    const response = await request.response();
    if (response) await response.finished();
    const timing = request.timing();
    const [sent, received, sizes, protocol] = await Promise.all([
      request.allHeaders(),
      response?.allHeaders(),
      request.sizes().catch(() => undefined),
      response?.httpVersion().catch(() => undefined),
    ]);
    const hop: RequestHop = {
      pageref,
      // Playwright's timings are milliseconds after the request's start.
      timestamp: 0,
      wallTime: timing.startTime / 1000,
      request: {
        url: request.url(),
        method: request.method(),
        headers: sent,
        postData: request.postData() ?? undefined,
      },
      resourceType: request.resourceType(),
      dataLength: sizes?.responseBodySize ?? 0,
    };
    if (response && received) {
      hop.response = {
        status: response.status(),
        statusText: response.statusText(),
        headers: received,
        mimeType: (received['content-type'] ?? '').split(';')[0]!.trim(),
        protocol,
        encodedDataLength: sizes?.responseHeadersSize ?? 0,
        timing: {
          requestTime: 0,
          dnsStart: timing.domainLookupStart,
          dnsEnd: timing.domainLookupEnd,
          connectStart: timing.connectStart,
          connectEnd: timing.connectEnd,
          sslStart: timing.secureConnectionStart,
          sslEnd: timing.secureConnectionStart >= 0 ? timing.connectEnd : -1,
          sendStart: timing.requestStart,
          sendEnd: timing.requestStart,
          receiveHeadersEnd: timing.responseStart,
        },
      };
    }
    const at = Math.max(0, timing.responseEnd) / 1000;
    const failure = request.failure();
    const end: HopEnd = failure
      ? { kind: 'failed', timestamp: at, errorText: failure.errorText }
      : response
        ? {
            kind: 'finished',
            timestamp: at,
            encodedDataLength: (sizes?.responseHeadersSize ?? 0) + (sizes?.responseBodySize ?? 0),
          }
        : { kind: 'incomplete' };
    return harEntry(hop, end);
  } catch {
    return undefined;
  }
}
