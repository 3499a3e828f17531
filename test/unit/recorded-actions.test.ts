import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/shared/recordings.js';
import { parseNdjson } from '../../src/renderer/src/api/queries.js';
import { describeRanAction as describeRecordedAction } from '../../src/shared/describe-action.js';
import {
  actionMarks,
  playingIndex,
  videoTime,
} from '../../src/renderer/src/recordings/recorded-actions.js';
import { fileSize } from '../../src/renderer/src/recordings/files.js';
import { groupSteps } from '../../src/renderer/src/tasks/task-timeline.js';

const started = '2026-11-22T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(started) + seconds * 1000).toISOString();
const base = { computer_id: 'comp_1' };

describe("a recording's actions on the video's time line", () => {
  const events: RecordedEvent[] = [
    { ...base, type: 'navigation', timestamp: at(0.5), tab_id: 't1', url: 'http://x/' },
    {
      ...base,
      type: 'action_request',
      timestamp: at(2.25),
      request_id: 'r1',
      action: { type: 'click', at: { x: 150, y: 130 }, button: 'left', count: 1 },
    },
    { ...base, type: 'action_response', timestamp: at(2.4), request_id: 'r1', status: 'success' },
    {
      ...base,
      type: 'console',
      timestamp: at(3),
      level: 'log',
      text: 'hello',
      url: null,
      tab_id: 't1',
    },
    {
      ...base,
      type: 'action_request',
      timestamp: at(5),
      request_id: 'r2',
      action: { type: 'type', text: 'hi' },
      source: 'live_view',
    },
    {
      ...base,
      type: 'action_response',
      timestamp: at(5.1),
      request_id: 'r2',
      status: 'error',
      error_message: 'no focused field',
    },
    { ...base, type: 'recording_ended', timestamp: at(9), reason: 'deleted' },
  ];

  it('places each action at its offset from the start, marks a person’s and a failure', () => {
    expect(actionMarks(events, started)).toEqual([
      {
        key: 'page-0',
        kind: 'page',
        offsetMs: 500,
        text: 'page went to http://x/',
        byPerson: false,
        read: false,
      },
      {
        key: 'r1',
        kind: 'action',
        offsetMs: 2250,
        text: 'click at 150, 130',
        byPerson: false,
        read: false,
      },
      {
        key: 'r2',
        kind: 'action',
        offsetMs: 5000,
        text: 'type “hi”',
        byPerson: true,
        read: false,
        error: 'no focused field',
      },
    ]);
  });

  it('reads the NDJSON answer line by line', () => {
    const text = events.map((event) => JSON.stringify(event)).join('\n') + '\n';
    expect(parseNdjson(new TextEncoder().encode(text))).toEqual(events);
  });

  it('finds what is on screen at a position: the last action at or before it', () => {
    const offsets = [0, 2250, 5000];
    expect(playingIndex(offsets, undefined)).toBe(-1);
    expect(playingIndex([1000], 999)).toBe(-1);
    expect(playingIndex(offsets, 0)).toBe(0);
    expect(playingIndex(offsets, 2249)).toBe(0);
    expect(playingIndex(offsets, 2250)).toBe(1);
    expect(playingIndex(offsets, 60_000)).toBe(2);
    // A seek to an action's offset reads back a hair below it: that action is still the one shown.
    expect((1001 / 1000) * 1000).toBeLessThan(1001);
    expect(playingIndex([0, 1001], (1001 / 1000) * 1000)).toBe(1);
  });

  it('says what each action as the server ran it did', () => {
    const click = { type: 'click', at: { x: 5, y: 6 }, button: 'left' };
    expect(describeRecordedAction({ ...click, count: 1 })).toBe('click at 5, 6');
    expect(describeRecordedAction({ ...click, count: 2 })).toBe('double click at 5, 6');
    expect(describeRecordedAction({ ...click, button: 'right', count: 1 })).toBe(
      'right click at 5, 6',
    );
    expect(describeRecordedAction({ type: 'keypress', keys: ['Control', 'A'] })).toBe(
      'keypress Control+A',
    );
    expect(describeRecordedAction({ type: 'scroll', at: { x: 1, y: 2 }, dx: 0, dy: 240 })).toBe(
      'scroll at 1, 2 by 0, 240',
    );
    const path = [
      { x: 1, y: 2 },
      { x: 2, y: 3 },
      { x: 3, y: 4 },
    ];
    expect(describeRecordedAction({ type: 'drag', path })).toBe('drag from 1, 2 to 3, 4');
    expect(describeRecordedAction({ type: 'navigate', url: 'http://x/' })).toBe('go to http://x/');
    expect(describeRecordedAction({ type: 'new_tab' })).toBe('new tab');
    expect(describeRecordedAction({ type: 'finish', signal: 'answer', result: '42' })).toBe(
      'answer: 42',
    );
    expect(describeRecordedAction({ type: 'switch_tab', tabId: 't2' })).toBe('switch tab');
  });

  it('tells reads of the computer from actions that change its screen', () => {
    const read = { ...base, type: 'action_request' as const, timestamp: at(1), request_id: 'r9' };
    const marks = actionMarks(
      [
        { ...read, action: { type: 'screenshot', base64: false } },
        { ...read, request_id: 'r10', action: { type: 'navigate', url: 'http://x/' } },
      ],
      started,
    );
    expect(marks.map((mark) => [mark.text, mark.read])).toEqual([
      ['screenshot', true],
      ['go to http://x/', false],
    ]);
  });

  it('lists what a page or a CDP client did without an action, once, and skips blank tabs', () => {
    const tab = { ...base, type: 'tab' as const, tab_id: 't2' };
    const marks = actionMarks(
      [
        { ...tab, timestamp: at(0), event: 'opened', url: 'about:blank' },
        { ...base, type: 'navigation', timestamp: at(1), tab_id: 't1', url: 'http://x/a' },
        { ...tab, timestamp: at(2), event: 'opened', url: 'http://x/popup' },
        { ...tab, timestamp: at(3), event: 'switched', url: 'http://x/popup' },
        { ...tab, timestamp: at(4), event: 'closed', url: 'http://x/popup' },
        // A navigate action says where it went: its navigation is not a line of its own.
        {
          ...base,
          type: 'action_request',
          timestamp: at(5),
          request_id: 'r1',
          action: { type: 'navigate', url: 'http://x/b' },
        },
        { ...base, type: 'navigation', timestamp: at(5.2), tab_id: 't1', url: 'http://x/b' },
        {
          ...base,
          type: 'action_response',
          timestamp: at(5.3),
          request_id: 'r1',
          status: 'success',
        },
        // A click that leads to another page: the page it went to is.
        {
          ...base,
          type: 'action_request',
          timestamp: at(6),
          request_id: 'r2',
          action: { type: 'click', at: { x: 1, y: 2 }, button: 'left', count: 1 },
        },
        { ...base, type: 'navigation', timestamp: at(6.1), tab_id: 't1', url: 'http://x/c' },
        {
          ...base,
          type: 'action_response',
          timestamp: at(6.2),
          request_id: 'r2',
          status: 'success',
        },
      ],
      started,
    );
    expect(marks.map((mark) => [mark.offsetMs, mark.kind, mark.text])).toEqual([
      [1000, 'page', 'page went to http://x/a'],
      [2000, 'page', 'tab opened on http://x/popup'],
      [4000, 'page', 'tab closed: http://x/popup'],
      [5000, 'action', 'go to http://x/b'],
      [6000, 'action', 'click at 1, 2'],
      [6100, 'page', 'page went to http://x/c'],
    ]);
    expect(new Set(marks.map((mark) => mark.key)).size).toBe(marks.length);
  });

  it('lists an action held for a person where it was asked, with the decision and the wait', () => {
    const approval = {
      ...base,
      approval_id: 'appr_1',
      task_id: null,
      action: { type: 'click', at: { x: 120, y: 233 }, button: 'left', count: 1 },
      policy_id: 'pay',
      reason: 'Payments need a person',
      url: 'http://shop/',
      target: null,
      screenshot_url: null,
    };
    const marks = actionMarks(
      [
        { ...approval, type: 'approval_required', timestamp: at(1) },
        {
          ...base,
          type: 'approval_decided',
          timestamp: at(21.5),
          approval_id: 'appr_1',
          task_id: null,
          status: 'approved',
          note: null,
          status_reason: null,
        },
        {
          ...base,
          type: 'action_request',
          timestamp: at(21.6),
          request_id: 'r1',
          action: approval.action,
        },
      ],
      started,
    );
    expect(marks.map((mark) => [mark.offsetMs, mark.kind, mark.text])).toEqual([
      [
        1000,
        'approval',
        'held click at 120, 233 for a person: Payments need a person (approved after 20 s)',
      ],
      [21_600, 'action', 'click at 120, 233'],
    ]);
  });

  it('ends with how the computer ended, without the tabs its end closed', () => {
    const tab = { ...base, type: 'tab' as const, tab_id: 't2' };
    const marks = actionMarks(
      [
        { ...tab, timestamp: at(1), event: 'opened', url: 'http://x/popup' },
        // Closed by the site ten seconds before the end: a line of its own.
        { ...tab, timestamp: at(2), event: 'closed', url: 'http://x/popup' },
        { ...tab, tab_id: 't1', timestamp: at(11.7), event: 'closed', url: 'http://x/a' },
        {
          ...base,
          type: 'status',
          timestamp: at(11.8),
          status: 'terminated',
          termination_reason: 'backend_lost',
        },
      ],
      started,
    );
    expect(marks.map((mark) => [mark.offsetMs, mark.kind, mark.text])).toEqual([
      [1000, 'page', 'tab opened on http://x/popup'],
      [2000, 'page', 'tab closed: http://x/popup'],
      [11_800, 'end', 'ended: its browser backend stopped answering (backend_lost)'],
    ]);
  });

  it('writes times and sizes a person reads', () => {
    expect(videoTime(0)).toBe('0:00.0');
    expect(videoTime(7480)).toBe('0:07.4');
    expect(videoTime(723_050)).toBe('12:03.0');
    expect(fileSize(812)).toBe('812 B');
    expect(fileSize(14_540)).toBe('14.2 KB');
    expect(fileSize(3 * 1024 * 1024)).toBe('3.00 MB');
  });
});

describe('the task timeline beside its video', () => {
  it('starts each step at its first event, where the video seeks for it', () => {
    const event = { task_id: 'task_1', step: 1 };
    const steps = groupSteps([
      { ...event, step: 0, type: 'started', computer_id: 'comp_1', max_steps: 5, timestamp: at(1) },
      { ...event, type: 'screenshot', screenshot_url: 'http://h/1.png', timestamp: at(2) },
      { ...event, type: 'reasoning', text: 'thinking', timestamp: at(3) },
      { ...event, step: 2, type: 'screenshot', screenshot_url: 'http://h/2.png', timestamp: at(7) },
    ]);
    expect(steps.map((step) => step.at - Date.parse(started))).toEqual([1000, 2000, 7000]);
  });
});
