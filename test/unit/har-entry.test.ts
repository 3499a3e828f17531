import { describe, expect, it } from 'vitest';
import {
  harEntry,
  POST_DATA_CAP,
  type RequestHop,
} from '../../src/main/core/computers/browser/har.js';

/** A GET as DevTools reports it, started at monotonic second 100. */
function hop(overrides: Partial<RequestHop> = {}): RequestHop {
  return {
    pageref: 'tab_1',
    timestamp: 100,
    wallTime: 1_700_000_000,
    request: { url: 'https://example.test/a?q=1&q=2', method: 'GET', headers: { Accept: '*/*' } },
    dataLength: 0,
    ...overrides,
  };
}

const RESPONSE = {
  status: 200,
  statusText: 'OK',
  headers: { 'content-type': 'text/html', link: '</a.css>; rel=preload\n</b.js>; rel=preload' },
  mimeType: 'text/html',
  protocol: 'h2',
  encodedDataLength: 100,
  timing: {
    requestTime: 100.01,
    dnsStart: 1,
    dnsEnd: 3,
    connectStart: 3,
    connectEnd: 9,
    sslStart: 5,
    sslEnd: 9,
    sendStart: 10,
    sendEnd: 11,
    receiveHeadersEnd: 31,
  },
};

describe('harEntry', () => {
  it('turns resource timing into HAR timings that add up to the time taken', () => {
    const entry = harEntry(hop({ response: RESPONSE, dataLength: 500 }), {
      kind: 'finished',
      timestamp: 100.05,
      encodedDataLength: 400,
    });
    expect(entry.startedDateTime).toBe(new Date(1_700_000_000_000).toISOString());
    expect(entry.time).toBe(50);
    expect(entry.timings).toEqual({
      blocked: 12,
      dns: 2,
      connect: 6,
      ssl: 4,
      send: 1,
      wait: 20,
      receive: 9,
    });
    const { blocked, dns, connect, send, wait, receive } = entry.timings;
    expect(blocked + dns + connect + send + wait + receive).toBeCloseTo(entry.time, 6);
    expect(entry.request.httpVersion).toBe('h2');
    expect(entry.request.queryString).toEqual([
      { name: 'q', value: '1' },
      { name: 'q', value: '2' },
    ]);
    expect(entry.response).toMatchObject({
      content: { size: 500, mimeType: 'text/html' },
      bodySize: 300,
      _transferSize: 400,
      headers: [
        { name: 'content-type', value: 'text/html' },
        { name: 'link', value: '</a.css>; rel=preload' },
        { name: 'link', value: '</b.js>; rel=preload' },
      ],
    });
  });

  it('redacts credentials whatever their case, and every Set-Cookie line', () => {
    const entry = harEntry(
      hop({
        sentHeaders: { Authorization: 'Basic c2VjcmV0', COOKIE: 'a=1', 'Proxy-Authorization': 'x' },
        response: RESPONSE,
        receivedHeaders: { headers: { 'Set-Cookie': 'a=1\nb=2' }, statusCode: 200 },
      }),
      { kind: 'finished', timestamp: 101, encodedDataLength: 100 },
    );
    expect(entry.request.headers).toEqual([
      { name: 'Authorization', value: '[redacted]' },
      { name: 'COOKIE', value: '[redacted]' },
      { name: 'Proxy-Authorization', value: '[redacted]' },
    ]);
    expect(entry.response.headers).toEqual([{ name: 'Set-Cookie', value: '[redacted]' }]);
  });

  it('keeps request bodies up to the cap and says what it left out', () => {
    const small = harEntry(
      hop({
        request: {
          ...hop().request,
          method: 'POST',
          postData: 'a=1',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        },
      }),
      { kind: 'incomplete' },
    );
    expect(small.request.postData).toEqual({
      mimeType: 'application/x-www-form-urlencoded',
      text: 'a=1',
    });
    const big = 'x'.repeat(POST_DATA_CAP + 10);
    const capped = harEntry(hop({ request: { ...hop().request, postData: big } }), {
      kind: 'incomplete',
    });
    expect(capped.request.postData?.text).toHaveLength(POST_DATA_CAP);
    expect(capped.request.postData?.comment).toBe(
      `truncated to ${POST_DATA_CAP} of ${POST_DATA_CAP + 10} bytes`,
    );
    expect(capped.request.bodySize).toBe(POST_DATA_CAP + 10);
    const unsent = harEntry(hop({ request: { ...hop().request, hasPostData: true } }), {
      kind: 'incomplete',
    });
    expect(unsent.request.postData?.comment).toMatch(/not recorded/);
  });

  it('writes a failed request with status 0 and why, and one cut off as incomplete', () => {
    const failed = harEntry(hop(), {
      kind: 'failed',
      timestamp: 100.2,
      errorText: 'net::ERR_CONNECTION_REFUSED',
    });
    expect(failed).toMatchObject({
      time: 200,
      response: { status: 0, content: { size: 0, mimeType: 'x-unknown' }, bodySize: -1 },
      _failureText: 'net::ERR_CONNECTION_REFUSED',
    });
    const cut = harEntry(hop({ response: RESPONSE }), { kind: 'incomplete' });
    expect(cut).toMatchObject({ time: 0, response: { status: 200 }, _incomplete: true });
  });

  it('gives a redirect the response that redirected and where it points', () => {
    const entry = harEntry(hop({ response: RESPONSE }), {
      kind: 'redirected',
      timestamp: 100.03,
      response: { ...RESPONSE, status: 301, statusText: 'Moved', headers: { Location: '/b' } },
    });
    expect(entry.response).toMatchObject({
      status: 301,
      redirectURL: 'https://example.test/b',
      content: { size: 0 },
    });
  });
});
