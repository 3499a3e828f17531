import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Approval, AttentionItem, Policy } from '../../src/shared/approvals.js';
import { signature } from '../../src/main/core/attention/webhook.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let fixtures: FixtureServer;
let id: string;

const PAY = { x: 100, y: 60 };
const CANCEL = { x: 260, y: 60 };
const USER = { x: 140, y: 135 };
const PASSWORD = { x: 140, y: 185 };
const AWAY = { x: 60, y: 240 };

const act = (action: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/computers/${id}/${action}`, body);
const setPolicies = async (policies: Array<Omit<Policy, 'when'> & { when?: Policy['when'] }>) => {
  const answer = await server.request('PUT', '/policies', policies);
  expect(answer.status, answer.text).toBe(200);
};
/** What the checkout page says happened. */
const status = async () => {
  const html = await act('html');
  return /<p id="status">([^<]*)<\/p>/.exec(html.body.result.html_content)![1];
};
const pending = async (): Promise<Approval> =>
  eventually(async () => {
    const list = await server.request<Approval[]>('GET', '/approvals?status=pending');
    return list.body.find((approval) => approval.computer_id === id);
  });
const decide = (approval: Approval, verb: 'approve' | 'deny', note?: string) =>
  server.request('POST', `/approvals/${approval.id}/${verb}`, note ? { note } : {});

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});
beforeEach(async () => {
  await setPolicies([]);
  id = (await server.request('POST', '/computers', {})).body.id;
  expect((await act('navigate', { url: `${fixtures.url}/checkout.html` })).body.status).toBe(
    'success',
  );
});
afterEach(async () => {
  await server.request('DELETE', `/computers/${id}`);
});

describe('policies', () => {
  it('are replaced as a list and read back; bad ones are a 400 naming the field', async () => {
    const policy = {
      id: 'pay',
      description: 'paying needs a person',
      when: { action_types: ['click'], target: { name_pattern: '^pay' } },
      then: 'ask',
    };
    await setPolicies([policy as Policy]);
    expect((await server.request('GET', '/policies')).body).toEqual([policy]);

    const badRegex = await server.request('PUT', '/policies', [
      { id: 'x', when: { text_pattern: '(' }, then: 'ask' },
    ]);
    expect(badRegex.status).toBe(400);
    expect(badRegex.body.message).toMatch(/text_pattern is not a valid regular expression/);
    expect(badRegex.body.param).toBe('0.when.text_pattern');
    const twice = await server.request('PUT', '/policies', [
      { id: 'x', then: 'ask' },
      { id: 'x', then: 'deny' },
    ]);
    expect(twice.status).toBe(400);
    expect(twice.body.message).toMatch(/used twice/);
    const badThen = await server.request('PUT', '/policies', [{ id: 'x', then: 'maybe' }]);
    expect(badThen.status).toBe(400);
    expect(badThen.body.param).toBe('0.then');
    // Nothing stored was lost by the refused ones.
    expect((await server.request('GET', '/policies')).body).toEqual([policy]);
  });

  it('are set only by the machine owner', async () => {
    const other = server.core.keys.create('other-policies').key;
    const refused = await server.request('PUT', '/policies', [], { key: other });
    expect(refused.status).toBe(403);
    expect((await server.request('GET', '/policies', undefined, { key: other })).status).toBe(200);
  });

  it('deny answers at once with nothing performed; allow and no match run', async () => {
    await setPolicies([
      { id: 'cancel-ok', when: { target: { name_pattern: 'cancel' } }, then: 'allow' },
      {
        id: 'no-clicks',
        description: 'no clicking',
        when: { action_types: ['click'] },
        then: 'deny',
      },
    ]);
    const denied = await act('click', PAY);
    expect(denied.body).toMatchObject({
      status: 'error',
      error_message: 'denied: policy no-clicks (no clicking)',
    });
    expect((await act('click', CANCEL)).body.status).toBe('success');
    expect((await act('type', { text: 'typed' })).body.status).toBe('success');
    expect(await status()).toBe('cancelled');
  });
});

describe('an action a policy asks about', () => {
  beforeEach(async () => {
    await setPolicies([
      {
        id: 'pay',
        description: 'paying needs a person',
        when: { action_types: ['click'], target: { role: 'button', name_pattern: '^pay' } },
        then: 'ask',
      },
    ]);
  });

  it('waits for approval, shows what it would do, and runs once approved', async () => {
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    const next = async (type: string) => {
      for (;;) {
        const event = await events.next();
        if (!event) throw new Error(`the events stream ended before ${type}`);
        const data = event.data as { type: string };
        if (data.type === type) return data;
      }
    };
    try {
      const click = act('click', PAY);
      const approval = await pending();
      expect(approval).toMatchObject({
        status: 'pending',
        computer_id: id,
        task_id: null,
        action: { type: 'click', at: PAY },
        policy_id: 'pay',
        reason: 'paying needs a person',
        url: `${fixtures.url}/checkout.html`,
        target: { role: 'button', name: 'Pay now', tag: 'button', input_type: null, ...PAY },
      });
      const shot = await fetch(approval.screenshot_url!);
      expect(shot.headers.get('content-type')).toBe('image/png');
      expect((await shot.arrayBuffer()).byteLength).toBeGreaterThan(1000);
      const asked = await next('approval_required');
      expect(asked).toMatchObject({ approval_id: approval.id, policy_id: 'pay' });
      expect(await status()).toBe('nothing yet');

      // Sent by the test's fetch, whose User-Agent is "node", with the test's key.
      expect(approval.requested_by).toBe(`node (key ${server.key.slice(0, 7)}…)`);
      const approved = await decide(approval, 'approve', 'go ahead');
      expect(approved.body).toMatchObject({ status: 'approved', note: 'go ahead' });
      expect((await click).body.status).toBe('success');
      expect(await status()).toBe('paid');
      const decided = await next('approval_decided');
      expect(decided).toMatchObject({ approval_id: approval.id, status: 'approved' });

      // Single use: it cannot be decided again, and the next click is asked about anew.
      expect((await decide(approval, 'approve')).status).toBe(400);
      const again = act('click', PAY);
      const second = await pending();
      expect(second.id).not.toBe(approval.id);
      await decide(second, 'deny');
      expect((await again).body.error_message).toBe('denied: a person denied it');
    } finally {
      events.close();
    }
  });

  it('keeps its computer from idling out while a person decides', async () => {
    const made = await server.request('POST', '/computers', { inactivity_timeout_seconds: 1 });
    const quick = made.body.id as string;
    const on = (path: string, body?: unknown) =>
      server.request(body === undefined ? 'GET' : 'POST', `/computers/${quick}${path}`, body);
    try {
      expect((await on('/navigate', { url: `${fixtures.url}/checkout.html` })).body.status).toBe(
        'success',
      );
      const click = on('/click', PAY);
      const approval = await eventually(async () => {
        const list = await server.request<Approval[]>('GET', '/approvals?status=pending');
        return list.body.find((one) => one.computer_id === quick);
      });
      // The person takes longer than the computer's idle timeout.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await on('/status')).body).toMatchObject({ status: 'running', idle_held: true });
      await decide(approval, 'approve');
      expect((await click).body.status).toBe('success');
      expect((await on('')).body.idle_held).toBe(false);
      // Decided, it idles out as before.
      const ended = await eventually(async () => {
        const now = (await on('')).body;
        return now.status === 'terminated' && now;
      });
      expect(ended.termination_reason).toBe('idle_timeout');
    } finally {
      await server.request('DELETE', `/computers/${quick}`);
    }
  });

  it('denied: the request answers with the note and nothing happens', async () => {
    const click = act('click', PAY);
    const approval = await pending();
    const denied = await decide(approval, 'deny', 'not this month');
    expect(denied.body).toMatchObject({ status: 'denied', note: 'not this month' });
    expect((await click).body).toMatchObject({
      status: 'error',
      error_message: 'denied: not this month',
    });
    expect(await status()).toBe('nothing yet');
  });

  it('is void when the page changed meanwhile, and asked again', async () => {
    const click = act('click', PAY);
    const approval = await pending();
    // Other actions go on while one waits: here the page changes under it.
    expect((await act('navigate', { url: `${fixtures.url}/checkout.html?v=2` })).body.status).toBe(
      'success',
    );
    const expired = await decide(approval, 'approve');
    expect(expired.body.status).toBe('expired');
    expect(expired.body.status_reason).toBe(
      `the page changed: ${fixtures.url}/checkout.html → ${fixtures.url}/checkout.html?v=2`,
    );
    expect(await status()).toBe('nothing yet');
    const asked = await pending();
    expect(asked.id).not.toBe(approval.id);
    expect(asked.url).toBe(`${fixtures.url}/checkout.html?v=2`);
    expect((await decide(asked, 'approve')).body.status).toBe('approved');
    expect((await click).body.status).toBe('success');
    expect(await status()).toBe('paid');
  });

  it('is void when the element under the point changed', async () => {
    const click = act('click', PAY);
    const approval = await pending();
    // The page renames the button under the point.
    expect((await act('hotkey', { keys: ['r'] })).body.status).toBe('success');
    const expired = await decide(approval, 'approve');
    expect(expired.body.status).toBe('expired');
    expect(expired.body.status_reason).toBe(
      'the target changed: button “Pay now” → button “Pay later”',
    );
    const asked = await pending();
    await decide(asked, 'deny', 'no');
    expect((await click).body.error_message).toBe('denied: no');
  });

  it('whose request closed (an SDK that timed out) is joined by its retry, and runs once', async () => {
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    try {
      const gone = new AbortController();
      const first = fetch(`${server.url}/computers/${id}/click`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.key}`,
          'content-type': 'application/json',
          ...SDK_HEADERS.currentPython,
        },
        body: JSON.stringify(PAY),
        signal: gone.signal,
      }).catch(() => undefined);
      const approval = await pending();
      gone.abort();
      await first;
      // The server saw it leave: its click is answered as not started.
      for (;;) {
        const event = await events.next();
        const data = event?.data as { type: string; error_message?: string } | undefined;
        if (!data) throw new Error('the events stream ended');
        if (data.type === 'action_response') {
          expect(data.error_message).toMatch(/not started/);
          break;
        }
      }
      // The SDK sends the same request again after its backoff; the person approves meanwhile.
      const retry = server.request('POST', `/computers/${id}/click`, PAY, {
        headers: { ...SDK_HEADERS.currentPython, 'x-stainless-retry-count': '1' },
      });
      const approved = await decide(approval, 'approve');
      expect(approved.body, approved.text).toMatchObject({ status: 'approved' });
      expect((await retry).body.status).toBe('success');
      expect(await status()).toBe('paid');
      // One approval for the one click, not one per try.
      const asked = await server.request<Approval[]>('GET', `/approvals?computer_id=${id}`);
      expect(asked.body.map((one) => [one.id, one.status])).toEqual([[approval.id, 'approved']]);
    } finally {
      events.close();
    }
  });

  it('expires after approvals.timeout_seconds with nothing performed', async () => {
    await server.request('PATCH', '/settings', { approvals: { timeout_seconds: 0.3 } });
    try {
      const click = await act('click', PAY);
      expect(click.body.status).toBe('error');
      expect(click.body.error_message).toBe(
        'approval expired: no decision within 0.3 s (approvals.timeout_seconds)',
      );
      expect(await status()).toBe('nothing yet');
      const [approval] = (await server.request('GET', `/approvals?computer_id=${id}`)).body;
      expect(approval.status).toBe('expired');
    } finally {
      await server.request('PATCH', '/settings', { approvals: { timeout_seconds: null } });
    }
  });

  it('stops a batch before the held action, which runs once approved', async () => {
    const batch = server.request(
      'POST',
      `/computers/${id}/batch`,
      {
        actions: [
          { type: 'click', x: CANCEL.x, y: CANCEL.y },
          { type: 'click', x: PAY.x, y: PAY.y },
          { type: 'click', x: CANCEL.x, y: CANCEL.y },
        ],
      },
      { headers: SDK_HEADERS.currentTypeScript },
    );
    const approval = await pending();
    expect(approval.requested_by).toBe(`TypeScript SDK 0.14.0 (key ${server.key.slice(0, 7)}…)`);
    expect(await status()).toBe('cancelled');
    await decide(approval, 'approve');
    const done = await batch;
    expect(done.body).toMatchObject({ success: true, failed_index: null });
    expect(await status()).toBe('cancelled, paid, cancelled');

    const refused = server.request('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'click', x: PAY.x, y: PAY.y },
        { type: 'click', x: CANCEL.x, y: CANCEL.y },
      ],
    });
    await decide(await pending(), 'deny', 'stop');
    expect((await refused).body).toMatchObject({
      success: false,
      failed_index: 0,
      error_message: 'denied: stop',
    });
    expect(await status()).toBe('cancelled, paid, cancelled');
  });

  it('does not hold what a person does in the live view', async () => {
    const click = await server.request('POST', `/computers/${id}/click`, PAY, {
      headers: { 'x-benchtop-source': 'live-view' },
    });
    expect(click.body.status).toBe('success');
    expect(await status()).toBe('paid');
    const asked = (await server.request('GET', `/approvals?computer_id=${id}`)).body;
    expect(asked).toEqual([]);
  });
});

describe('conditions', () => {
  it('target alone: asks about what acts on the Pay button, not about reading its page', async () => {
    // No action_types: every action with a point or keys on the button is asked about.
    await setPolicies([
      { id: 'pay', when: { target: { role: 'button', name_pattern: '^Pay' } }, then: 'ask' },
    ]);
    // A read held by mistake expires (an error answer) instead of hanging the test.
    await server.request('PATCH', '/settings', { approvals: { timeout_seconds: 5 } });
    try {
      const click = act('click', PAY);
      await decide(await pending(), 'approve');
      expect((await click).body.status).toBe('success');
      // The button has the focus now; a screenshot and a read of the html act on no element.
      const shot = await act('screenshot');
      expect(shot.body.status, shot.body.error_message).toBe('success');
      expect(await status()).toBe('paid');
      // Enter on the focused button pays again: asked about.
      const enter = act('hotkey', { keys: ['Enter'] });
      const approval = await pending();
      expect(approval).toMatchObject({ action: { type: 'keypress' }, target: { name: 'Pay now' } });
      await decide(approval, 'deny');
      expect((await enter).body.error_message).toBe('denied: a person denied it');
      expect(await status()).toBe('paid');
    } finally {
      await server.request('PATCH', '/settings', { approvals: { timeout_seconds: null } });
    }
  });

  it('target.input_type: typing into a password field is asked about, other typing is not', async () => {
    await setPolicies([
      {
        id: 'pw',
        when: { action_types: ['type'], target: { input_type: 'password' } },
        then: 'ask',
      },
    ]);
    await act('click', USER);
    expect((await act('type', { text: 'alice' })).body.status).toBe('success');
    await act('click', PASSWORD);
    const typing = act('type', { text: 'hunter2' });
    const approval = await pending();
    expect(approval.target).toMatchObject({ input_type: 'password', name: 'Password' });
    // The person sees that a password is typed, never which.
    expect(approval.action).toEqual({ type: 'type', text: '••••' });
    const attention = await server.request('GET', '/attention');
    expect(JSON.stringify([approval, attention.body])).not.toContain('hunter2');
    await decide(approval, 'approve');
    expect((await typing).body.status).toBe('success');
  });

  it('target.input_type: a page that lies about the focused field is still asked about', async () => {
    await setPolicies([
      {
        id: 'pw',
        when: { action_types: ['type'], target: { input_type: 'password' } },
        then: 'ask',
      },
    ]);
    await act('navigate', { url: `${fixtures.url}/checkout.html?disguise` });
    await act('click', PASSWORD);
    const typing = act('type', { text: 'hunter2' });
    const approval = await pending();
    expect(approval.target).toMatchObject({ input_type: 'password', name: 'Password' });
    await decide(approval, 'deny');
    expect((await typing).body.error_message).toBe('denied: a person denied it');
  });

  it('new_origin: a navigation or a link that leaves the origin', async () => {
    await setPolicies([{ id: 'leave', when: { new_origin: true }, then: 'deny' }]);
    expect((await act('navigate', { url: `${fixtures.url}/tab.html` })).body.status).toBe(
      'success',
    );
    const away = fixtures.url.replace('127.0.0.1', 'localhost');
    expect((await act('navigate', { url: `${away}/tab.html` })).body.error_message).toBe(
      'denied: policy leave',
    );
    await act('navigate', { url: `${fixtures.url}/checkout.html` });
    expect((await act('click', AWAY)).body.error_message).toBe('denied: policy leave');
    expect((await act('click', PAY)).body.status).toBe('success');
  });

  it('url_pattern, text_pattern and computer_ids', async () => {
    await setPolicies([
      {
        id: 'secret',
        when: { text_pattern: 'secret', url_pattern: '**/checkout.html' },
        then: 'deny',
      },
      { id: 'elsewhere', when: { computer_ids: ['comp_other'] }, then: 'deny' },
    ]);
    await act('click', USER);
    expect((await act('type', { text: 'my secret' })).body.error_message).toBe(
      'denied: policy secret',
    );
    expect((await act('type', { text: 'fine' })).body.status).toBe('success');
    await act('navigate', { url: `${fixtures.url}/checkout.html?x=1` });
    await act('click', USER);
    expect((await act('type', { text: 'secret' })).body.status).toBe('success');
  });

  it('command_pattern gates exec, exec/sync and debug', async () => {
    await setPolicies([{ id: 'rm', when: { command_pattern: '\\brm\\b' }, then: 'ask' }]);
    expect(
      (await server.request('POST', `/computers/${id}/exec/sync`, { command: 'echo ok' })).body,
    ).toMatchObject({ stdout: 'ok\n', exit_code: 0 });
    const sync = server.request(
      'POST',
      `/computers/${id}/exec/sync`,
      { command: 'rm -f nothing-here && echo removed' },
      { headers: SDK_HEADERS.currentPython },
    );
    const approval = await pending();
    expect(approval.action).toMatchObject({
      type: 'exec_sync',
      command: 'rm -f nothing-here && echo removed',
    });
    expect(approval.requested_by).toBe(`Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`);
    await decide(approval, 'approve');
    expect((await sync).body).toMatchObject({ stdout: 'removed\n', exit_code: 0 });

    const denied = server.request('POST', `/computers/${id}/exec/sync`, {
      command: 'rm -rf /tmp/x',
    });
    await decide(await pending(), 'deny', 'never');
    const answer = await denied;
    expect(answer.status).toBe(403);
    expect(answer.body.message).toBe('denied: never');

    const debug = act('debug', { command: 'rm -f none; echo via debug' });
    await decide(await pending(), 'approve');
    expect((await debug).body.result.debug_response).toBe('via debug\n');
  });
});

describe('what waits for a person', () => {
  let hook: Server;
  let received: Array<{ body: string; signature: string | undefined }>;

  beforeAll(async () => {
    received = [];
    hook = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ body, signature: req.headers['x-benchtop-signature'] as string });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const { port } = hook.address() as AddressInfo;
    await server.request('PATCH', '/settings', {
      notifications: { webhook_url: `http://127.0.0.1:${port}/hook`, webhook_secret: 'whsec-test' },
    });
  });
  afterAll(async () => {
    await server.request('PATCH', '/settings', {
      notifications: { webhook_url: null, webhook_secret: null },
    });
    await new Promise((resolve) => hook.close(resolve));
  });

  it('lists a pending approval in /attention and posts it, signed, to the webhook', async () => {
    await setPolicies([{ id: 'pay', when: { target: { name_pattern: 'pay' } }, then: 'ask' }]);
    const click = act('click', PAY);
    const approval = await pending();
    const items = (await server.request<AttentionItem[]>('GET', '/attention')).body;
    expect(items).toContainEqual({
      type: 'approval',
      since: approval.created_at,
      task_id: null,
      computer_id: id,
      approval_id: approval.id,
      summary: `click at 100, 60 on ${fixtures.url}/checkout.html from node (key ${server.key.slice(0, 7)}…) — policy pay asks a person first`,
    });
    const delivery = await eventually(() =>
      received.find((item) => JSON.parse(item.body).approval_id === approval.id),
    );
    expect(delivery.signature).toBe(signature(delivery.body, 'whsec-test'));
    expect(JSON.parse(delivery.body)).toMatchObject({ organization: 'local', type: 'approval' });
    // The secret is masked in settings answers.
    const settings = await server.request('GET', '/settings');
    expect(settings.body.settings.notifications.webhook_secret).toBe('********');

    await decide(approval, 'approve');
    await click;
    const after = (await server.request<AttentionItem[]>('GET', '/attention')).body;
    expect(after.find((item) => item.approval_id === approval.id)).toBeUndefined();
  });

  it('keeps approvals per organization', async () => {
    await setPolicies([{ id: 'pay', when: { target: { name_pattern: 'pay' } }, then: 'ask' }]);
    const click = act('click', PAY);
    const approval = await pending();
    const other = server.core.keys.create('other-approvals').key;
    expect(
      (await server.request('GET', `/approvals/${approval.id}`, undefined, { key: other })).status,
    ).toBe(404);
    expect(
      (await server.request('POST', `/approvals/${approval.id}/approve`, {}, { key: other }))
        .status,
    ).toBe(404);
    expect((await server.request('GET', '/attention', undefined, { key: other })).body).toEqual([]);
    await decide(approval, 'deny');
    await click;
  });
});
