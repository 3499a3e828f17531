import { describe, expect, it } from 'vitest';
import { cdpTokenMatches, newCdpToken } from '../../src/main/core/computers/cdp-access.js';
import {
  answeredId,
  DENIED_METHODS,
  screenClientMessage,
  type Screened,
} from '../../src/main/server/cdp/cdp-messages.js';

const DOWNLOADS = '/data/computers/comp_a/downloads';

const screen = (message: unknown): Screened =>
  screenClientMessage(typeof message === 'string' ? message : JSON.stringify(message), DOWNLOADS);

/** The reply a screened message got, parsed; fails when it was forwarded instead. */
function reply(screened: Screened): any {
  if (!('reply' in screened)) throw new Error(`forwarded: ${screened.forward}`);
  return JSON.parse(screened.reply);
}

function forwarded(screened: Screened): any {
  if (!('forward' in screened)) throw new Error(`answered: ${screened.reply}`);
  return JSON.parse(screened.forward);
}

describe('screenClientMessage', () => {
  it('passes ordinary methods on, with every field kept', () => {
    const message = {
      id: 7,
      method: 'Runtime.evaluate',
      params: { expression: '1 + 1', returnByValue: true },
      sessionId: 'ABC',
    };
    expect(forwarded(screen(message))).toEqual(message);
  });

  it('refuses each denied method with its reason, on any session', () => {
    for (const [method, reason] of DENIED_METHODS) {
      const answer = reply(screen({ id: 3, method, sessionId: 'S1' }));
      expect(answer).toEqual({
        id: 3,
        sessionId: 'S1',
        error: {
          code: -32000,
          message: `${method} is refused by Benchtop's CDP endpoint: ${reason}`,
        },
      });
    }
  });

  it('decides on the method Chromium would see: a duplicated key is never passed on as sent', () => {
    const text = '{"id":1,"method":"Page.enable","method":"Browser.close"}';
    expect(reply(screen(text)).error.code).toBe(-32000);
    const other = '{"id":1,"method":"Browser.close","method":"Page.enable"}';
    expect(forwarded(screen(other))).toEqual({ id: 1, method: 'Page.enable' });
  });

  it('puts downloads in the computer’s folder whatever folder the client names', () => {
    for (const method of ['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']) {
      const message = { id: 2, method, params: { behavior: 'allow', downloadPath: '/etc' } };
      expect(forwarded(screen(message)).params).toEqual({
        behavior: 'allow',
        downloadPath: DOWNLOADS,
      });
    }
    const deny = { id: 2, method: 'Browser.setDownloadBehavior', params: { behavior: 'deny' } };
    expect(forwarded(screen(deny))).toEqual(deny);
  });

  it('answers what is not a CDP command with the errors Chromium would give', () => {
    expect(reply(screen('not json'))).toEqual({
      error: { code: -32700, message: 'Message must be valid JSON' },
    });
    expect(reply(screen('[1]')).error.code).toBe(-32600);
    expect(reply(screen('null')).error.code).toBe(-32600);
    expect(reply(screen({ id: 1.5, method: 'Page.enable' }))).not.toHaveProperty('id');
    expect(reply(screen({ id: '1', method: 'Page.enable' })).error.code).toBe(-32600);
    expect(reply(screen({ id: 4 }))).toMatchObject({ id: 4, error: { code: -32600 } });
    expect(reply(screen({ id: 4, method: 5 }))).toMatchObject({ id: 4, error: { code: -32600 } });
    expect(reply(screen({ id: 4, method: 'Page.enable', sessionId: 9 }))).toMatchObject({
      id: 4,
      error: { code: -32600 },
    });
  });
});

describe('answeredId', () => {
  it("reads the id of an answer from its first bytes, and none of an event's", () => {
    expect(answeredId(Buffer.from('{"id":12345,"result":{}}'))).toBe(12345);
    expect(answeredId(Buffer.from('{"id":0,"error":{"code":-32000,"message":"x"}}'))).toBe(0);
    expect(answeredId(Buffer.from('{"method":"Page.loadEventFired","params":{}}'))).toBe(undefined);
    expect(answeredId(Buffer.from('{"id":'))).toBe(undefined);
    expect(answeredId(Buffer.from('{"id":"x"}'))).toBe(undefined);
  });
});

describe('cdp tokens', () => {
  it('are 256 random bits, URL-safe, and match only themselves', () => {
    const token = newCdpToken();
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(newCdpToken()).not.toBe(token);
    expect(cdpTokenMatches(token, token)).toBe(true);
    expect(cdpTokenMatches(token, token.slice(0, -1))).toBe(false);
    expect(cdpTokenMatches(token, `${token}x`)).toBe(false);
    expect(cdpTokenMatches(token, '')).toBe(false);
  });
});
