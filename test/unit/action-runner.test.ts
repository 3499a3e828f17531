import { describe, expect, it } from 'vitest';
import { ActionRunner } from '../../src/main/core/actions/action-runner.js';
import type { ActionRequest, Action } from '../../src/main/core/computers/action.js';
import { ComputerEvents } from '../../src/main/core/events/computer-events.js';
import type { ScreenshotStore } from '../../src/main/core/screenshots/screenshot-store.js';
import type { ShellService } from '../../src/main/core/shell/shell-service.js';
import { FAKE_TAB, FakeOperator, fakeSession } from '../helpers/fake-operator.js';

function setup(operator = new FakeOperator()) {
  const events = new ComputerEvents();
  const runner = new ActionRunner({
    screenshots: {
      save: () => Promise.resolve('/screenshots/x.png'),
    } as unknown as ScreenshotStore,
    baseUrl: () => 'http://bench',
    shell: {} as ShellService,
    events,
  });
  const session = fakeSession(operator, { id: 'comp_unit' });
  const request = (action: Action, extra: Partial<ActionRequest> = {}): ActionRequest => ({
    action,
    requestId: 'req_unit',
    includeContext: false,
    ...extra,
  });
  return { runner, session, operator, request, events };
}

describe('the action runner', () => {
  it("refuses an action its computer's kind does not perform, before anything runs", async () => {
    const { runner, session, operator, request } = setup(
      new FakeOperator({ kind: 'desktop', capabilities: ['click'] }),
    );
    const refused = runner.run(session, request({ type: 'change_proxy', proxyUrl: '' }));
    await expect(refused).rejects.toMatchObject({
      code: 'invalid_request',
      path: ['type'],
      message: expect.stringMatching(/^change_proxy is not available on desktop computers; /),
    });
    expect(operator.performed).toEqual([]);
  });

  it('composes point_and_type from a click and typing', async () => {
    const { runner, session, operator, request } = setup();
    const result = await runner.run(
      session,
      request({ type: 'point_and_type', at: { x: 3, y: 4 }, text: 'hi' }),
    );
    expect(result.status).toBe('success');
    expect(operator.performed.map((done) => done.action)).toEqual([
      { type: 'click', at: { x: 3, y: 4 }, button: 'left', count: 1 },
      { type: 'type', text: 'hi' },
    ]);
  });

  it("cuts a wait short when its request's signal aborts, saying why", async () => {
    const { runner, session, request, events } = setup();
    const controller = new AbortController();
    // Aborted once the wait was announced (it then runs): it would otherwise last ten minutes.
    events.subscribe(session.id, (event) => {
      if (event.type === 'action_request') controller.abort(new Error('the task was cancelled'));
    });
    const result = await runner.run(
      session,
      request({ type: 'wait', ms: 600_000 }, { signal: controller.signal }),
    );
    expect(result).toMatchObject({
      status: 'error',
      error_message: 'the wait was cut short: the task was cancelled',
    });
  });

  it('never starts (nor announces) an action whose signal aborted while it waited for its turn', async () => {
    const { runner, session, operator, request, events } = setup();
    const seen: string[] = [];
    events.subscribe(session.id, (event) => seen.push(event.type));
    const controller = new AbortController();
    controller.abort(new Error('the task was cancelled'));
    const result = await runner.run(
      session,
      request(
        { type: 'click', at: { x: 1, y: 1 }, button: 'left', count: 1 },
        { signal: controller.signal },
      ),
    );
    expect(result).toMatchObject({
      status: 'error',
      error_message: 'the click action was not started: the task was cancelled',
    });
    expect(operator.performed).toEqual([]);
    expect(seen).toEqual([]);
  });

  it('gives a wait the main tab of a computer with tabs', async () => {
    const { runner, session, request } = setup();
    const result = await runner.run(session, request({ type: 'wait', ms: 0 }));
    expect(result).toMatchObject({ status: 'success', executed_tab_id: FAKE_TAB });
  });

  it('stores a screenshot and answers its absolute URL', async () => {
    const { runner, session, request } = setup();
    const result = await runner.run(session, request({ type: 'screenshot', base64: false }));
    expect(result).toMatchObject({
      status: 'success',
      result: { screenshot_url: 'http://bench/screenshots/x.png', width: 1, height: 1 },
    });
  });
});
