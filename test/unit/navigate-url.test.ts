import { describe, expect, it } from 'vitest';
import { normalizeAction } from '../../src/main/core/computers/normalize-action.js';

/** The URL a navigate action opens when asked for `typed`. */
function opened(typed: string): string {
  const { action } = normalizeAction({ type: 'navigate', url: typed });
  return (action as { url: string }).url;
}

describe('a navigate URL typed without a scheme', () => {
  it.each([
    ['example.com', 'https://example.com/'],
    ['example.com/search?q=mug', 'https://example.com/search?q=mug'],
    ['shop.example.com:8443/cart', 'https://shop.example.com:8443/cart'],
    ['  example.com  ', 'https://example.com/'],
  ])('opens a public name over https: %s', (typed, url) => {
    expect(opened(typed)).toBe(url);
  });

  it.each([
    ['localhost:3000', 'http://localhost:3000/'],
    ['localhost:3000/login?next=/', 'http://localhost:3000/login?next=/'],
    ['localhost', 'http://localhost/'],
    ['app.localhost:5173', 'http://app.localhost:5173/'],
    ['127.0.0.1:8765/page2.html', 'http://127.0.0.1:8765/page2.html'],
    ['192.168.1.20', 'http://192.168.1.20/'],
    ['[::1]:8080/', 'http://[::1]:8080/'],
    ['intranet/wiki', 'http://intranet/wiki'],
  ])('opens this machine or the local network over http, as a browser does: %s', (typed, url) => {
    expect(opened(typed)).toBe(url);
  });

  it.each([
    ['https://localhost:3000/', 'https://localhost:3000/'],
    ['http://example.com', 'http://example.com/'],
    ['about:blank', 'about:blank'],
    ['data:text/html,<p>hi', 'data:text/html,<p>hi'],
  ])('keeps the scheme it was given: %s', (typed, url) => {
    expect(opened(typed)).toBe(url);
  });

  it.each([
    [
      'javascript:alert(1)',
      'URLs with scheme javascript: cannot be opened; use http, https, about or data',
    ],
    [
      'file:///etc/passwd',
      'URLs with scheme file: cannot be opened; use http, https, about or data',
    ],
    [
      'javascript:1',
      'URLs with scheme javascript: cannot be opened; use http, https, about or data',
    ],
    ['not a url at all', '"not a url at all" is not a valid URL'],
  ])('refuses what a browser computer cannot open: %s', (typed, message) => {
    expect(() => opened(typed)).toThrow(
      expect.objectContaining({ code: 'invalid_request', message, path: ['url'] }),
    );
  });
});
