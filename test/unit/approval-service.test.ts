import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/shared/approvals.js';
import { ActionRunner } from '../../src/main/core/actions/action-runner.js';
import { ApprovalService } from '../../src/main/core/approvals/approval-service.js';
import { ApprovalStore } from '../../src/main/core/approvals/approval-store.js';
import type { ActionRequest } from '../../src/main/core/computers/action.js';
import type { ComputerSession } from '../../src/main/core/computers/computer-session.js';
import { resolveSettings } from '../../src/main/core/config.js';
import { ComputerEvents } from '../../src/main/core/events/computer-events.js';
import { ScreenshotStore } from '../../src/main/core/screenshots/screenshot-store.js';
import type { ShellService } from '../../src/main/core/shell/shell-service.js';
import { openDatabase, type Db } from '../../src/main/core/store/database.js';
import { eventually } from '../helpers/test-server.js';
import { FakeOperator, fakeSession } from '../helpers/fake-operator.js';

/**
 * A held action whose request closes (an SDK that timed out and will send it again): the gate and
 * the runner for real over SQLite, the computer faked. The grace for a retry is 0.2 s here.
 */

let dir: string;
let db: Db;
let operator: FakeOperator;
let approvals: ApprovalService;
let runner: ActionRunner;
let session: ComputerSession;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'benchtop-approval-service-'));
  db = openDatabase(join(dir, 'benchtop.db'));
  const screenshots = new ScreenshotStore(join(dir, 'screenshots'));
  await screenshots.init();
  const events = new ComputerEvents();
  const settings = resolveSettings({
    stored: {
      policies: [
        // A look at the page for each action: a retry's check is seen in the fake's calls.
        {
          id: 'blank',
          description: 'a person first',
          when: { url_pattern: 'about:blank' },
          then: 'ask',
        },
      ],
    },
    env: {},
    flags: {},
  });
  approvals = new ApprovalService({
    store: new ApprovalStore(db),
    events,
    screenshots,
    baseUrl: () => 'http://127.0.0.1:1',
    settings: () => settings,
    retryGraceMs: GRACE_MS,
  });
  runner = new ActionRunner({
    screenshots,
    baseUrl: () => 'http://127.0.0.1:1',
    events,
    shell: {} as ShellService,
    gate: approvals,
  });
  operator = new FakeOperator();
  session = fakeSession(operator, { workspace: dir });
});
afterEach(() => {
  approvals.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** How long a held action nobody waits for stays pending here. */
const GRACE_MS = 500;

let requests = 0;
/** A click at 10, 10 as a request sends it; `signal` closes it. */
function click(signal?: AbortSignal, retried = false): Promise<{ status: string; error?: string }> {
  const request: ActionRequest = {
    action: { type: 'click', at: { x: 10, y: 10 }, button: 'left', count: 1 },
    requestId: `req_${++requests}`,
    includeContext: false,
    signal,
    retried,
  };
  return runner
    .run(session, request)
    .then((result) => ({ status: result.status, error: result.error_message ?? undefined }));
}

const all = (): Approval[] => approvals.list('local');
const pending = () => eventually(() => all().find((approval) => approval.status === 'pending'));
const clicks = () => operator.performed.filter((request) => request.action.type === 'click');

/** A click held, then its request closed: what the first try of an SDK that timed out leaves. */
async function heldAndLeft(): Promise<Approval> {
  const closed = new AbortController();
  const first = click(closed.signal);
  const approval = await pending();
  closed.abort();
  expect(await first).toMatchObject({ status: 'error' });
  return approval;
}

describe('a held action whose request closed', () => {
  it('is joined by a retry of it: one approval, and the action runs once when approved', async () => {
    const approval = await heldAndLeft();
    const looks = () => operator.calls.filter((call) => call === 'look').length;
    const looked = looks();
    const retry = click(undefined, true);
    // The retry has looked at the page for the policy, and joined the held action.
    await eventually(() => looks() > looked);
    await new Promise((resolve) => setImmediate(resolve));
    const decided = await approvals.approve('local', approval.id, undefined);
    expect(decided.status).toBe('approved');
    expect(await retry).toEqual({ status: 'success', error: undefined });
    expect(all()).toHaveLength(1);
    expect(clicks()).toHaveLength(1);
  });

  it('approved before the retry comes, runs for the retry', async () => {
    const approval = await heldAndLeft();
    const decided = approvals.approve('local', approval.id, 'go');
    const retry = await click(undefined, true);
    expect(retry.status).toBe('success');
    expect((await decided).status).toBe('approved');
    expect(all()).toHaveLength(1);
    expect(clicks()).toHaveLength(1);
  });

  it('denied before the retry comes, tells the retry so instead of asking again', async () => {
    const approval = await heldAndLeft();
    const denied = approvals.deny('local', approval.id, 'not this one');
    expect(denied.status).toBe('denied');
    const retry = await click(undefined, true);
    expect(retry).toEqual({ status: 'error', error: 'denied: not this one' });
    expect(all()).toHaveLength(1);
    expect(clicks()).toHaveLength(0);
    // A new request (not a retry) is asked about anew.
    const again = click();
    await eventually(() => all().length === 2);
    approvals.deny('local', all()[0]!.id, undefined);
    expect((await again).status).toBe('error');
  });

  it('denied again in the gap, tells a retry the second denial for its own grace', async () => {
    approvals.deny('local', (await heldAndLeft()).id, 'no');
    const firstDenied = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The same click sent anew (not a retry) is asked anew, left again and denied again.
    approvals.deny('local', (await heldAndLeft()).id, 'still no');
    expect(
      Date.now() - firstDenied,
      "the second denial came within the first one's grace",
    ).toBeLessThan(GRACE_MS);
    // Past the first denial's grace, within the second's.
    await new Promise((resolve) => setTimeout(resolve, firstDenied + GRACE_MS + 20 - Date.now()));
    expect(await click(undefined, true)).toEqual({ status: 'error', error: 'denied: still no' });
    expect(all()).toHaveLength(2);
    expect(clicks()).toHaveLength(0);
  });

  it('leaves the queue when no retry comes, nothing run', async () => {
    const approval = await heldAndLeft();
    const expired = await eventually(() =>
      all().find((one) => one.id === approval.id && one.status === 'expired'),
    );
    expect(expired.status_reason).toBe('its request was closed and not sent again within 0.5 s');
    expect(clicks()).toHaveLength(0);
  });

  it('approved with no retry coming, expires saying nothing ran', async () => {
    const approval = await heldAndLeft();
    const decided = await approvals.approve('local', approval.id, undefined);
    expect(decided).toMatchObject({
      status: 'expired',
      status_reason:
        'approved, but nothing ran: its request was closed and not sent again within 0.5 s',
    });
    expect(clicks()).toHaveLength(0);
  });
});
