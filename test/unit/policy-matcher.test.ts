import { describe, expect, it } from 'vitest';
import type { Policy } from '../../src/shared/approvals.js';
import type { ApprovalTarget } from '../../src/shared/approvals.js';
import {
  globToRegExp,
  PolicyMatcher,
  type GateSubject,
  type LookLevel,
} from '../../src/main/core/approvals/policy-matcher.js';

const PAY: ApprovalTarget = {
  role: 'button',
  name: 'Pay now',
  input_type: null,
  tag: 'button',
  href: null,
  x: 10,
  y: 10,
};

const click: GateSubject = {
  computerId: 'comp_a',
  action: { type: 'click', at: { x: 10, y: 10 }, button: 'left', count: 1 },
};

/** A page at `url` with `target` under every point, remembering what the matcher read of it. */
function page(url: string, target: ApprovalTarget | null = PAY) {
  const reads: LookLevel[] = [];
  const look = (level: LookLevel) => {
    reads.push(level);
    return Promise.resolve({ tabId: 'tab_1', url, target: level === 'target' ? target : null });
  };
  return { reads, look };
}

const ask = (id: string, when: Policy['when']): Policy => ({ id, when, then: 'ask' });

describe('PolicyMatcher', () => {
  it('takes the first policy that matches, and allows what none matches', async () => {
    const matcher = new PolicyMatcher([
      { id: 'keys', when: { action_types: ['key'] }, then: 'deny' },
      ask('pay', { target: { role: 'button', name_pattern: '^pay' } }),
      { id: 'clicks', when: { action_types: ['click'] }, then: 'allow' },
    ]);
    const match = await matcher.match(click, page('https://shop.test/').look);
    expect(match?.policy.id).toBe('pay');
    const other = await matcher.match(click, page('https://shop.test/', null).look);
    expect(other?.policy.id).toBe('clicks');
    expect(
      await new PolicyMatcher([ask('keys', { action_types: ['key'] })]).match(
        click,
        page('x').look,
      ),
    ).toBeUndefined();
  });

  it('reads nothing of the page for a policy the action alone rules out', async () => {
    const matcher = new PolicyMatcher([
      ask('typing', { action_types: ['type'], target: { input_type: 'password' } }),
      ask('shell', { command_pattern: 'rm' }),
    ]);
    const { reads, look } = page('https://shop.test/');
    expect(await matcher.match(click, look)).toBeUndefined();
    expect(reads).toEqual([]);
  });

  it('reads the element only once the URL of a policy naming both matched', async () => {
    const matcher = new PolicyMatcher([
      ask('pay-at-bank', { url_pattern: 'https://bank.test/**', target: { name_pattern: 'pay' } }),
    ]);
    const elsewhere = page('https://shop.test/checkout');
    expect(await matcher.match(click, elsewhere.look)).toBeUndefined();
    expect(elsewhere.reads).toEqual(['url']);
    const bank = page('https://bank.test/transfer');
    expect((await matcher.match(click, bank.look))?.policy.id).toBe('pay-at-bank');
    expect(bank.reads).toEqual(['url', 'target']);
  });

  it('matches action type aliases: a double click is a click and a double_click', async () => {
    const double: GateSubject = {
      ...click,
      action: { type: 'click', at: { x: 1, y: 1 }, button: 'left', count: 2 },
    };
    const matcher = new PolicyMatcher([ask('double', { action_types: ['double_click'] })]);
    expect((await matcher.match(double, page('x').look))?.policy.id).toBe('double');
    expect(await matcher.match(click, page('x').look)).toBeUndefined();
  });

  it('holds a look at the page (screenshot, html, tabs, a wait) only for a policy naming it', async () => {
    const at = (action: GateSubject['action']): GateSubject => ({ computerId: 'comp_a', action });
    const reads = [
      at({ type: 'screenshot', base64: false }),
      at({ type: 'html' }),
      at({ type: 'list_tabs' }),
      at({ type: 'wait', ms: 1000 }),
    ];
    const onBank = new PolicyMatcher([ask('bank', { url_pattern: 'https://bank.test/**' })]);
    const bank = page('https://bank.test/account');
    for (const read of reads) expect(await onBank.match(read, bank.look)).toBeUndefined();
    expect(bank.reads, 'ruled out by the action alone').toEqual([]);
    expect((await onBank.match(click, bank.look))?.policy.id).toBe('bank');
    expect((await onBank.match(at({ type: 'navigate', url: 'x' }), bank.look))?.policy.id).toBe(
      'bank',
    );
    const looks = new PolicyMatcher([
      ask('no-looks', { action_types: ['screenshot', 'html', 'list_tabs', 'wait'] }),
    ]);
    for (const read of reads) {
      expect((await looks.match(read, page('x').look))?.policy.id).toBe('no-looks');
    }
  });

  it('holds the pointer passing over an element (a move, a scroll) only for a policy naming it', async () => {
    const over = (type: 'move' | 'scroll'): GateSubject => ({
      computerId: 'comp_a',
      action:
        type === 'move'
          ? { type, at: { x: 10, y: 10 } }
          : { type, at: { x: 10, y: 10 }, dx: 0, dy: 300 },
    });
    const onPay = new PolicyMatcher([
      ask('pay', { target: { role: 'button', name_pattern: '^pay' } }),
    ]);
    const checkout = page('https://shop.test/checkout');
    expect(await onPay.match(over('move'), checkout.look)).toBeUndefined();
    expect(await onPay.match(over('scroll'), checkout.look)).toBeUndefined();
    expect(checkout.reads, 'ruled out by the action alone').toEqual([]);
    expect((await onPay.match(click, checkout.look))?.policy.id).toBe('pay');
    const drag: GateSubject = {
      computerId: 'comp_a',
      action: {
        type: 'drag',
        path: [
          { x: 10, y: 10 },
          { x: 90, y: 90 },
        ],
      },
    };
    expect((await onPay.match(drag, checkout.look))?.policy.id).toBe('pay');
    // Named, they are held; and a policy on a page alone still holds them there.
    const named = new PolicyMatcher([
      ask('hover', { action_types: ['move', 'scroll'], target: { role: 'button' } }),
    ]);
    expect((await named.match(over('move'), page('x').look))?.policy.id).toBe('hover');
    expect((await named.match(over('scroll'), page('x').look))?.policy.id).toBe('hover');
    const onShop = new PolicyMatcher([ask('shop', { url_pattern: 'https://shop.test/**' })]);
    expect((await onShop.match(over('scroll'), checkout.look))?.policy.id).toBe('shop');
  });
});

describe('globToRegExp', () => {
  it('reads ** as anything, * as anything but a slash, and the rest literally', () => {
    expect(globToRegExp('https://*.bank.test/**').test('https://www.bank.test/a/b?c=1')).toBe(true);
    expect(globToRegExp('https://*.bank.test/**').test('https://a.b.bank.test.evil/')).toBe(false);
    expect(globToRegExp('**/pay?x=1').test('https://shop.test/pay?x=1')).toBe(true);
    expect(globToRegExp('**/pay?x=1').test('https://shop.test/payx=1')).toBe(false);
  });
});
