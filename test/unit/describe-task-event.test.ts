import { describe, expect, it } from 'vitest';
import { describeTaskEvent } from '../../src/shared/describe-task-event.js';
import type { TaskEvent } from '../../src/shared/tasks.js';

const windowLine = (event: TaskEvent) => describeTaskEvent(event, 'window');

const base = { task_id: 'task_1', step: 3, timestamp: '2026-11-22T10:00:00.000Z' };

describe('supervision events read as sentences in the timeline', () => {
  it('an approval asked names the action, its target and why', () => {
    const event: TaskEvent = {
      ...base,
      type: 'approval_required',
      approval_id: 'appr_1',
      computer_id: 'comp_1',
      task_id: 'task_1',
      action: { type: 'click', at: { x: 150, y: 130 }, button: 'left' },
      policy_id: 'payments',
      reason: 'Paying needs a person',
      url: 'http://shop.example/checkout',
      target: {
        role: 'button',
        name: 'Pay now',
        input_type: null,
        tag: 'button',
        href: null,
        x: 150,
        y: 130,
      },
      screenshot_url: 'http://h/a.png',
    };
    const text =
      'click at 150, 130 on button “Pay now”: Paying needs a person (policy payments, on http://shop.example/checkout)';
    expect(windowLine(event)).toEqual({ kind: 'asks you', text });
    // The offline bundle says the same to whoever it is handed to.
    expect(describeTaskEvent(event, 'bundle')).toEqual({ kind: 'asks approval', text });
  });

  it('a decision says how it went, with the note or what changed', () => {
    const decided = { ...base, type: 'approval_decided' as const, approval_id: 'appr_1' };
    expect(
      windowLine({ ...decided, status: 'denied', note: 'not this card', status_reason: null }),
    ).toEqual({ kind: 'denied', text: '“not this card”' });
    expect(
      windowLine({ ...decided, status: 'expired', note: null, status_reason: 'the page changed' }),
    ).toEqual({ kind: 'expired', text: 'the page changed' });
  });

  it('a pause says why; handoffs, stalls and budgets say what happened', () => {
    expect(windowLine({ ...base, type: 'paused', reason: 'budget' })?.text).toBe(
      'a budget was reached',
    );
    expect(windowLine({ ...base, type: 'paused' })).toEqual({ kind: 'paused', text: '' });
    expect(windowLine({ ...base, type: 'handoff_requested', reason: 'a captcha' })).toEqual({
      kind: 'asks for you',
      text: 'a captcha',
    });
    expect(
      windowLine({ ...base, type: 'stalled', reason: 'repeating', detail: 'click at 5, 6' })?.text,
    ).toBe('the same action three times: click at 5, 6');
    expect(
      windowLine({
        ...base,
        type: 'budget_reached',
        budget: 'max_cost_usd',
        limit: 0.5,
        used: 0.5123,
      })?.text,
    ).toBe('Cost (USD): used $0.5123 of $0.5000');
    expect(
      windowLine({
        ...base,
        type: 'budget_reached',
        budget: 'max_tokens',
        limit: 10000,
        used: 10250,
      })?.text,
    ).toBe('Tokens: used 10,250 of 10,000');
  });

  it('a turn taken through the API names who took it; one without a name reads as before', () => {
    const by = 'Python SDK 2.39.0 (key sk_5bRW…)';
    expect(windowLine({ ...base, type: 'paused', reason: 'user', by })).toEqual({
      kind: 'paused',
      text: `paused by ${by}`,
    });
    expect(windowLine({ ...base, type: 'paused', reason: 'user' })?.text).toBe(
      'paused by a person',
    );
    expect(windowLine({ ...base, type: 'resumed', by })).toEqual({
      kind: 'resumed',
      text: `by ${by}`,
    });
    expect(windowLine({ ...base, type: 'cancelled' })).toEqual({ kind: 'cancelled', text: '' });
    expect(windowLine({ ...base, type: 'user_message', text: 'hurry', by })).toEqual({
      kind: 'message',
      text: `hurry (from ${by})`,
    });
    expect(windowLine({ ...base, type: 'user_message', text: 'hurry' })).toEqual({
      kind: 'you said',
      text: 'hurry',
    });
    expect(windowLine({ ...base, type: 'handoff_requested', reason: 'a captcha', by })?.text).toBe(
      `a captcha (from ${by})`,
    );
  });

  it('a wait for the model says what its server answered, how long, and which try comes', () => {
    const retry = {
      ...base,
      type: 'model_retry' as const,
      error: 'OpenAI answered HTTP 429: Rate limit reached',
      attempt: 2,
      attempts: 3,
    };
    expect(windowLine({ ...retry, wait_ms: 1500 })).toEqual({
      kind: 'waits',
      text: 'OpenAI answered HTTP 429: Rate limit reached; trying again in 1.5 s (try 2 of 3)',
    });
    expect(windowLine({ ...retry, wait_ms: 480, attempt: 3 })?.text).toMatch(
      /trying again in 480 ms \(try 3 of 3\)$/,
    );
  });
});
