import { describe, expect, it } from 'vitest';
import type { AttentionItem } from '../../src/shared/approvals.js';
import {
  ATTENTION_ROUTE,
  notifyAttention,
  type AttentionFeed,
} from '../../src/main/window/attention-notifications.js';

/** A feed the test fires by hand, as core's fires once per new item. */
function feed() {
  const listeners = new Set<(org: string, item: AttentionItem) => void>();
  const source: AttentionFeed = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const fire = (org: string, item: AttentionItem) => listeners.forEach((l) => l(org, item));
  return { source, fire, listening: () => listeners.size };
}

const item: AttentionItem = {
  type: 'approval',
  since: '2026-11-22T10:00:00.000Z',
  task_id: null,
  computer_id: 'comp_1',
  approval_id: 'appr_1',
  summary: 'click on button “Pay now” at http://shop.example/checkout',
};

describe('OS notifications of the Electron app', () => {
  it('shows one per new item of the window’s organization; a click opens the Needs-you screen', () => {
    const { source, fire } = feed();
    const shown: { title: string; body: string }[] = [];
    const clicks: (() => void)[] = [];
    const opened: string[] = [];
    notifyAttention(
      source,
      (notice, onClick) => {
        shown.push(notice);
        clicks.push(onClick);
      },
      (route) => opened.push(route),
    );
    fire('local', item);
    fire('acme', { ...item, approval_id: 'appr_2' });
    fire('local', { ...item, type: 'handoff', task_id: 'task_9', summary: 'a captcha' });
    expect(shown).toEqual([
      {
        title: 'An action waits for your approval',
        body: 'click on button “Pay now” at http://shop.example/checkout (comp_1)',
      },
      { title: 'A task asks for you', body: 'a captcha (task_9)' },
    ]);
    clicks[1]!();
    expect(opened).toEqual([ATTENTION_ROUTE]);
  });

  it('stops when unsubscribed (the app quitting)', () => {
    const { source, listening } = feed();
    const stop = notifyAttention(
      source,
      () => undefined,
      () => undefined,
    );
    expect(listening()).toBe(1);
    stop();
    expect(listening()).toBe(0);
  });
});
