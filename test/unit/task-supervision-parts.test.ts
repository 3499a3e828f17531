import { describe, expect, it } from 'vitest';
import { healedReplayEvents } from '../helpers/task-events.js';
import type { ApprovalTarget } from '../../src/shared/approvals.js';
import type { TaskEvent } from '../../src/shared/tasks.js';
import { describePersonAction, PersonLog } from '../../src/main/core/agent/person-log.js';
import { actionKey, StallDetector } from '../../src/main/core/agent/stall-detector.js';
import {
  raisedBudgets,
  reachedBudget,
  stillReachedMessage,
} from '../../src/main/core/agent/task-budgets.js';

const click = (x: number) => [{ type: 'click', x, y: 1 }];

/** Feeds screens (with a different action before each but the first); the stalls it reports. */
function feed(screens: string[], actions?: Array<object[]>) {
  const detector = new StallDetector();
  return screens.map((screen, index) =>
    detector.observe(screen, index === 0 ? null : actionKey(actions?.[index] ?? click(index))),
  );
}

describe('the stall detector', () => {
  it('flags three actions in a row that change nothing, at the third', () => {
    const stalls = feed(['A', 'B', 'B', 'B', 'B']);
    expect(stalls.slice(0, 4)).toEqual([null, null, null, null]);
    expect(stalls[4]).toMatchObject({ reason: 'no_change' });
  });

  it('flags the same action three times in a row, even as the screen changes', () => {
    const same = click(7);
    const stalls = feed(['A', 'B', 'C', 'D'], [[], same, same, same]);
    expect(stalls.slice(0, 3)).toEqual([null, null, null]);
    expect(stalls[3]).toMatchObject({ reason: 'repeating' });
    expect(stalls[3]!.detail).toContain('"x":7');
  });

  it('flags two screens taking turns for four steps', () => {
    const stalls = feed(['A', 'B', 'A', 'B']);
    expect(stalls.slice(0, 3)).toEqual([null, null, null]);
    expect(stalls[3]).toMatchObject({ reason: 'oscillating' });
  });

  it('says nothing of new screens, a screen seen once before, or steps without actions', () => {
    expect(feed(['A', 'B', 'C', 'D', 'E', 'F'])).toEqual(Array(6).fill(null));
    expect(feed(['A', 'B', 'C', 'A', 'D'])).toEqual(Array(5).fill(null));
    expect(feed(['A', 'A', 'A', 'A'], [[], [], click(1), click(2)])).toEqual(Array(4).fill(null));
  });

  it('starts afresh after reset', () => {
    const detector = new StallDetector();
    detector.observe('A', null);
    detector.observe('A', actionKey(click(1)));
    detector.observe('A', actionKey(click(2)));
    detector.reset();
    expect(detector.observe('A', actionKey(click(3)))).toBeNull();
    expect(detector.observe('A', actionKey(click(4)))).toBeNull();
    expect(detector.observe('A', actionKey(click(5)))).toBeNull();
    expect(detector.observe('A', actionKey(click(6)))).toMatchObject({ reason: 'no_change' });
  });

  it('reads an action the same whatever the order of its fields', () => {
    expect(actionKey([{ type: 'click', x: 1, y: 2 }])).toBe(
      actionKey([{ y: 2, x: 1, type: 'click' }]),
    );
    expect(actionKey([])).toBeNull();
  });
});

describe('budgets', () => {
  const limits = { max_duration_seconds: 60, max_tokens: 1000, max_cost_usd: 0.5 };
  const use = (seconds: number, tokens: number, cost: number) => ({
    max_duration_seconds: seconds,
    max_tokens: tokens,
    max_cost_usd: cost,
  });

  it('tells the first budget used up, with its limit and what was used', () => {
    expect(reachedBudget(limits, use(59.9, 999, 0.49))).toBeNull();
    expect(reachedBudget(limits, use(61.23456, 10, 0))).toEqual({
      budget: 'max_duration_seconds',
      limit: 60,
      used: 61.235,
    });
    expect(reachedBudget(limits, use(1, 1000, 0))).toMatchObject({ budget: 'max_tokens' });
    expect(reachedBudget(limits, use(1, 1, 0.5000001))).toMatchObject({
      budget: 'max_cost_usd',
      used: 0.5,
    });
    const none = { max_duration_seconds: null, max_tokens: null, max_cost_usd: null };
    expect(reachedBudget(none, use(1e9, 1e9, 1e9))).toBeNull();
  });

  it('raises only the budgets given', () => {
    expect(raisedBudgets(limits, { max_tokens: 5000 })).toEqual({ ...limits, max_tokens: 5000 });
    expect(raisedBudgets(limits)).toEqual(limits);
  });

  it('says how to raise a budget that is still used up', () => {
    const message = stillReachedMessage('task_1', {
      budget: 'max_cost_usd',
      limit: 0.5,
      used: 0.61,
    });
    expect(message).toBe(
      'task task_1 has used $0.61 of its max_cost_usd budget of $0.5; resume it with {"budgets": {"max_cost_usd": <more than 0.61>}} to raise it',
    );
  });
});

describe("a person's actions as the model is told them", () => {
  const target = (fields: Partial<ApprovalTarget>): ApprovalTarget => ({
    role: null,
    name: null,
    input_type: null,
    tag: null,
    href: null,
    x: null,
    y: null,
    ...fields,
  });
  const password = target({ role: 'textbox', name: 'Password', input_type: 'password' });

  it('masks what goes into a password field', () => {
    expect(describePersonAction({ type: 'type', text: 'hunter2' }, password)).toBe(
      'typed •••• (a password field) on textbox “Password”',
    );
    expect(describePersonAction({ type: 'keypress', keys: ['h'] }, password)).toBe(
      'pressed •••• on textbox “Password”',
    );
    expect(describePersonAction({ type: 'keypress', keys: ['Enter'] }, password)).toBe(
      'pressed Enter on textbox “Password”',
    );
  });

  it('withholds typed text when nobody saw the field', () => {
    expect(describePersonAction({ type: 'type', text: 'hunter2' }, 'unknown')).toBe(
      'typed 7 characters (the field was not seen, so not shown)',
    );
  });

  it('tells clicks with what was clicked, and typed text', () => {
    const button = target({ role: 'button', name: 'Save' });
    const at = { x: 120, y: 80 };
    expect(describePersonAction({ type: 'click', at, button: 'left', count: 1 }, button)).toBe(
      'clicked at 120, 80 on button “Save”',
    );
    expect(describePersonAction({ type: 'click', at, button: 'right', count: 1 }, null)).toBe(
      'right clicked at 120, 80',
    );
    expect(describePersonAction({ type: 'type', text: 'alice' }, null)).toBe('typed “alice”');
  });

  it('writes pages and actions in order, leaving out looks and waits, and caps the list', () => {
    const log = new PersonLog();
    log.visited('https://a.example/');
    log.visited('https://a.example/');
    log.acted({ type: 'screenshot' }, null);
    log.acted({ type: 'navigate', url: 'https://b.example/' }, null);
    log.visited('https://b.example/');
    log.acted({ type: 'type', text: 'hi' }, null);
    expect(log.summary('Back.')).toBe(
      [
        'Back. Meanwhile a person used the computer:',
        '- visited https://a.example/',
        '- visited https://b.example/',
        '- typed “hi”',
        'Continue from this screenshot.',
      ].join('\n'),
    );
    expect(new PersonLog().summary('Back.')).toContain('did nothing on it');
    const busy = new PersonLog();
    for (let i = 0; i < 70; i++) busy.visited(`https://a.example/${i}`);
    expect(busy.summary('Back.')).toContain('- … and 10 more');
  });
});

describe('the bundle timeline', () => {
  const base = { task_id: 'task_1', step: 1, timestamp: '2026-11-22T10:00:00.000Z' };
  /** An action held for a person by a policy, paused for, then decided. */
  const held = (
    action: Extract<TaskEvent, { type: 'approval_required' }>['action'],
    policy: { policy_id: string; reason: string; url: string },
    decision: { status: 'approved' | 'denied'; note: string },
  ): TaskEvent[] => [
    {
      ...base,
      type: 'approval_required',
      computer_id: 'comp_1',
      approval_id: 'appr_1',
      action,
      ...policy,
      target: null,
      screenshot_url: null,
    },
    { ...base, type: 'paused', reason: 'approval' },
    { ...base, type: 'approval_decided', approval_id: 'appr_1', ...decision, status_reason: null },
  ];
  /** The lines of the one step the events make. */
  const stepLines = async (events: TaskEvent[]) => {
    const { buildTimeline } = await import('../../src/main/core/recordings/bundle/timeline.js');
    const [step] = buildTimeline({
      events: [{ ...base, type: 'screenshot', screenshot_url: '/s/1.png' }, ...events],
      personInputs: [],
      shots: new Map(),
      model: new Map(),
      videoStartedAt: undefined,
    });
    return step!.kind === 'step' ? step!.lines : [];
  };

  it('reads approvals, handoffs, stalls and budgets as lines', async () => {
    const lines = await stepLines([
      ...held(
        { type: 'type', text: 'hi' },
        { policy_id: 'ask-typing', reason: 'typing needs a person', url: 'https://a.example/' },
        { status: 'denied', note: 'not now' },
      ),
      { ...base, type: 'handoff_requested', reason: 'Sign in' },
      { ...base, type: 'stalled', reason: 'no_change', detail: 'nothing changed' },
      { ...base, type: 'budget_reached', budget: 'max_tokens', limit: 10, used: 12 },
    ]);
    expect(lines.map((line) => [line.label, line.text])).toEqual([
      [
        'asks approval',
        'type “hi”: typing needs a person (policy ask-typing, on https://a.example/)',
      ],
      ['paused', 'waiting for a person to approve an action'],
      ['denied', '“not now”'],
      ['asks a person', 'Sign in'],
      ['stalled', 'three actions in a row changed nothing on screen: nothing changed'],
      ['budget', 'Tokens: used 12 of 10'],
    ]);
  });

  it('marks an action held for a person with its result, not a separate line after the decision', async () => {
    const lines = await stepLines([
      { ...base, type: 'action', action: { type: 'click', x: 28, y: 91, button: 'left' } },
      ...held(
        { type: 'click', at: { x: 28, y: 91 }, button: 'left', count: 1 },
        { policy_id: 'pay', reason: 'paying needs a person', url: 'https://shop.example/' },
        { status: 'approved', note: 'ok' },
      ),
      { ...base, type: 'resumed' },
      { ...base, type: 'action_result', status: 'success', error_message: null },
    ]);
    expect(lines.map((line) => line.label)).toEqual([
      'does',
      'asks approval',
      'paused',
      'approved',
      'resumed',
    ]);
    expect(lines[0]!.result).toEqual({ ok: true, text: null });
  });

  it("gives each step of a replay its own entry, as the window's timeline does", async () => {
    const { buildTimeline } = await import('../../src/main/core/recordings/bundle/timeline.js');
    const entries = buildTimeline({
      events: healedReplayEvents('/s/2.png'),
      personInputs: [],
      shots: new Map([['/s/2.png', { file: 'shots/2.png', width: 800, height: 600 }]]),
      model: new Map(),
      videoStartedAt: undefined,
    });
    expect(
      entries.map(
        (entry) =>
          entry.kind === 'step' && [
            entry.step,
            entry.shot && 'file' in entry.shot ? entry.shot.file : null,
          ],
      ),
    ).toEqual([
      [0, null],
      [1, null],
      [2, 'shots/2.png'],
      [3, null],
    ]);
    const healed = entries[2]!;
    expect(healed.kind === 'step' && healed.lines.map((line) => [line.label, line.text])).toEqual([
      ['healed', 'click at 5, 6 → click at 5, 60 (moved)'],
      ['does', 'click at 5, 60'],
    ]);
  });
});
