import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionResult, BatchResult } from '../../src/shared/actions.js';
import type { Computer } from '../../src/shared/computers.js';
import { ComputerEvent } from '../../src/shared/events.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader, type SseEvent } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/** GET /computers/{id}/events: what a computer does, as Server-Sent Events. */

let server: TestServer;
let fixtures: FixtureServer;

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

async function createComputer(body: unknown = {}): Promise<Computer> {
  const response = await server.request<Computer>('POST', '/computers', body);
  if (response.status !== 200)
    throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body;
}

async function openEvents(id: string, key = server.key): Promise<SseReader> {
  const reader = await SseReader.open(`${server.url}/computers/${id}/events`, key);
  expect(reader.response.status).toBe(200);
  expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return reader;
}

/** Checks every event the way a client relies on: unnamed, JSON data of the contract, no [DONE]. */
function checked(event: SseEvent, computerId: string): ComputerEvent {
  expect(event.raw).not.toContain('[DONE]');
  expect(event.event).toBeUndefined();
  const parsed = ComputerEvent.parse(event.data);
  expect(parsed.computer_id).toBe(computerId);
  expect(parsed.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  return parsed;
}

/** Reads events until one matches (returning everything read), failing if the stream ends first. */
async function readUntil(
  reader: SseReader,
  computerId: string,
  match: (event: ComputerEvent) => boolean,
  timeoutMs = 15_000,
): Promise<ComputerEvent[]> {
  const seen: ComputerEvent[] = [];
  for (;;) {
    const raw = await reader.next(timeoutMs).catch((e) => {
      console.log('SEEN', JSON.stringify(seen));
      throw e;
    });
    if (!raw) throw new Error(`the stream ended first: ${JSON.stringify(seen)}`);
    const event = checked(raw, computerId);
    seen.push(event);
    if (match(event)) return seen;
  }
}

/** One line per event, the parts a test can predict. */
function describeEvent(event: ComputerEvent): string {
  switch (event.type) {
    case 'action_request':
      return `request ${event.request_id} ${event.action.type}`;
    case 'action_response':
      return `response ${event.request_id} ${event.status}`;
    case 'tab':
      return `tab ${event.event} ${event.tab_id}`;
    case 'navigation':
      return `navigation ${event.tab_id} ${event.url}`;
    case 'tab_refused':
      return `tab_refused ${event.url}`;
    case 'download':
      return `download ${event.state} ${event.name}`;
    case 'exec_output':
      return `exec_output ${event.request_id}`;
    case 'status':
      return `status ${event.status} ${event.termination_reason}`;
    case 'approval_required':
      return `approval_required ${event.policy_id} ${event.action.type}`;
    case 'approval_decided':
      return `approval_decided ${event.status}`;
  }
}

describe('a scripted sequence of actions', () => {
  let computer: Computer;
  let reader: SseReader;

  beforeAll(async () => {
    computer = await createComputer();
    reader = await openEvents(computer.id);
  });

  afterAll(async () => {
    reader?.close();
    if (computer) await server.request('DELETE', `/computers/${computer.id}`);
  });

  it('arrives in order, each response with its request id, with tab and navigation events', async () => {
    const id = computer.id;
    const tabs = await server.request<ActionResult>('GET', `/computers/${id}/tabs`);
    const list = tabs.body.result.tabs as Array<{ tab_id: string }>;
    const first = list[0]!.tab_id;
    const actionsUrl = `${fixtures.url}/actions.html`;
    const tabUrl = `${fixtures.url}/tab.html`;

    const act = async (method: string, path: string, body?: unknown) => {
      const response = await server.request<ActionResult>(method, `/computers/${id}${path}`, body);
      expect(response.body.status, response.text).toBe('success');
      return response.body;
    };
    const listed = tabs.body.request_id;
    await act('POST', '/click', { x: 50, y: 50, request_id: 'req_click' });
    await act('POST', '/type', { text: 'hi', request_id: 'req_type' });
    await act('POST', '/navigate', { url: actionsUrl, request_id: 'req_navigate' });
    const opened = await act('POST', '/tabs', { url: tabUrl, request_id: 'req_new_tab' });
    const second = opened.result.created_tab_id as string;
    const switched = await act('POST', `/tabs/${first}/switch`);
    const closed = await act('DELETE', `/tabs/${second}`);
    const batch = await server.request<BatchResult>('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'click', x: 150, y: 150, request_id: 'req_b1' },
        { type: 'wait', ms: 0, request_id: 'req_b2' },
        { type: 'go_to_url', url: tabUrl, request_id: 'req_b3' },
      ],
    });
    expect(batch.body.success, batch.text).toBe(true);

    const events = await readUntil(
      reader,
      id,
      (event) => event.type === 'action_response' && event.request_id === 'req_b3',
    );
    expect(events.map(describeEvent)).toEqual([
      `request ${listed} list_tabs`,
      `response ${listed} success`,
      'request req_click click',
      'response req_click success',
      'request req_type type',
      'response req_type success',
      'request req_navigate navigate',
      `navigation ${first} ${actionsUrl}`,
      'response req_navigate success',
      'request req_new_tab new_tab',
      `tab opened ${second}`,
      `navigation ${second} ${tabUrl}`,
      'response req_new_tab success',
      `request ${switched.request_id} switch_tab`,
      `tab switched ${first}`,
      `response ${switched.request_id} success`,
      `request ${closed.request_id} close_tab`,
      `tab closed ${second}`,
      `response ${closed.request_id} success`,
      'request req_b1 click',
      'response req_b1 success',
      'request req_b2 wait',
      'response req_b2 success',
      'request req_b3 navigate',
      `navigation ${first} ${tabUrl}`,
      'response req_b3 success',
    ]);

    const click = events.find((e) => e.type === 'action_request' && e.request_id === 'req_click');
    expect(click).toMatchObject({
      action: { type: 'click', at: { x: 50, y: 50 }, button: 'left', count: 1 },
    });
    const closedTab = events.find((event) => event.type === 'tab' && event.event === 'closed');
    expect(closedTab).toMatchObject({ tab_id: second, url: tabUrl });
    expect(reader.comments).toBe(0);
  });

  it('a failed action has an error response with the message', async () => {
    const result = await server.request<BatchResult>('POST', `/computers/${computer.id}/batch`, {
      actions: [
        { type: 'wait', ms: 0, request_id: 'req_ok' },
        { type: 'switch_tab', tab_id: 'tab_nosuchtab', request_id: 'req_bad' },
        { type: 'wait', ms: 0, request_id: 'req_never' },
      ],
    });
    expect(result.body.success).toBe(false);
    const events = await readUntil(
      reader,
      computer.id,
      (event) => event.type === 'action_response' && event.request_id === 'req_bad',
    );
    expect(events.map(describeEvent)).toEqual([
      'request req_ok wait',
      'response req_ok success',
      'request req_bad switch_tab',
      'response req_bad error',
    ]);
    expect(events.at(-1)).toMatchObject({ error_message: result.body.error_message });
  });

  it("a page's popup is an opened tab, at the URL it opened with", async () => {
    await server.request('POST', `/computers/${computer.id}/navigate`, {
      url: `${fixtures.url}/actions.html`,
    });
    await readUntil(reader, computer.id, (event) => event.type === 'action_response');
    const click = await server.request<ActionResult>('POST', `/computers/${computer.id}/click`, {
      x: 120,
      y: 557,
    });
    expect(click.body.status, click.text).toBe('success');
    const events = await readUntil(reader, computer.id, (event) => event.type === 'tab');
    const tabs = await server.request<ActionResult>('GET', `/computers/${computer.id}/tabs`);
    const main = (tabs.body.result.tabs as Array<{ tab_id: string; is_main: boolean }>).find(
      (tab) => tab.is_main,
    );
    expect(events.at(-1)).toMatchObject({
      event: 'opened',
      tab_id: main?.tab_id,
      url: `${fixtures.url}/tab.html`,
    });
  });
});

describe('shell commands', () => {
  it('exec output appears as exec_output, and a debug action has one response with its output', async () => {
    const computer = await createComputer();
    const reader = await openEvents(computer.id);
    try {
      const exec = await server.request('POST', `/computers/${computer.id}/exec/sync`, {
        command: 'printf hello; printf oops >&2',
      });
      expect(exec.body).toMatchObject({ stdout: 'hello', stderr: 'oops', exit_code: 0 });
      const execEvents = await readUntil(reader, computer.id, (e) => e.type === 'action_response');
      const output = execEvents.filter((event) => event.type === 'exec_output');
      const decoded = (stderr: boolean) =>
        output
          .filter((event) => event.is_stderr === stderr)
          .map((event) => Buffer.from(event.data, 'base64').toString('utf8'))
          .join('');
      expect(decoded(false)).toBe('hello');
      expect(decoded(true)).toBe('oops');
      expect(
        new Set(execEvents.map((event) => (event as { request_id: string }).request_id)).size,
      ).toBe(1);
      expect(execEvents.at(-1)).toMatchObject({ status: 'success', exit_code: 0, stdout: 'hello' });

      const debug = await server.request<ActionResult>('POST', `/computers/${computer.id}/debug`, {
        command: 'echo debugged',
        request_id: 'req_debug',
      });
      expect(debug.body.status, debug.text).toBe('success');
      const events = await readUntil(reader, computer.id, (e) => e.type === 'action_response');
      expect(events.map(describeEvent)).toEqual([
        'request req_debug debug',
        'exec_output req_debug',
        'response req_debug success',
      ]);
      expect(events.at(-1)).toMatchObject({ exit_code: 0, stdout: 'debugged\n', stderr: '' });
      const more = await reader.collect(300);
      expect(more.map((event) => describeEvent(checked(event, computer.id)))).toEqual([]);
    } finally {
      reader.close();
      await server.request('DELETE', `/computers/${computer.id}`);
    }
  });
});

describe('the end of a computer', () => {
  it('deleting it sends a final status event, then the stream closes', async () => {
    const computer = await createComputer();
    const reader = await openEvents(computer.id);
    const deleted = await server.request('DELETE', `/computers/${computer.id}`);
    expect(deleted.status).toBe(204);
    const events = await readUntil(reader, computer.id, (e) => e.type === 'status');
    expect(events.at(-1)).toMatchObject({
      type: 'status',
      status: 'terminated',
      termination_reason: 'deleted',
    });
    expect(await reader.next()).toBeUndefined();
    expect(reader.ended).toBe(true);
    expect(server.core.events.listenerCount(computer.id)).toBe(0);
  });

  it('an idle timeout sends status idle_timeout, then the stream closes (following does not keep it alive)', async () => {
    const computer = await createComputer({ inactivity_timeout_seconds: 1 });
    const reader = await openEvents(computer.id);
    const events = await readUntil(reader, computer.id, (e) => e.type === 'status', 10_000);
    expect(events).toEqual([
      expect.objectContaining({ status: 'terminated', termination_reason: 'idle_timeout' }),
    ]);
    expect(await reader.next()).toBeUndefined();
    const after = await server.request<Computer>('GET', `/computers/${computer.id}`);
    expect(after.body.termination_reason).toBe('idle_timeout');
  });

  it("a terminated computer's stream is one status event, then it closes", async () => {
    const computer = await createComputer();
    await server.request('DELETE', `/computers/${computer.id}`);
    const reader = await openEvents(computer.id);
    const first = await reader.next();
    expect(first).toBeDefined();
    expect(checked(first!, computer.id)).toMatchObject({
      type: 'status',
      status: 'terminated',
      termination_reason: 'deleted',
    });
    expect(await reader.next()).toBeUndefined();
    expect(server.core.events.listenerCount(computer.id)).toBe(0);
  });
});

describe('who may follow', () => {
  const expectNotFound = (response: {
    status: number;
    text: string;
    body: any;
    headers: Headers;
  }) => {
    expect(response.status, response.text).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({ code: 'not_found', message: expect.any(String) });
    expect(response.body.request_id).toMatch(/^req_/);
    expect(response.text).not.toContain('data:');
  };

  it('an unknown computer is a 404 with the error body and no event', async () => {
    expectNotFound(await server.request('GET', '/computers/comp_doesnotexist000000000/events'));
  });

  it("another organization's computer is a 404 with the error body and no event", async () => {
    const computer = await createComputer();
    try {
      const other = server.core.keys.create('other').key;
      expectNotFound(
        await server.request('GET', `/computers/${computer.id}/events`, undefined, { key: other }),
      );
      expect(server.core.events.listenerCount(computer.id)).toBe(0);
    } finally {
      await server.request('DELETE', `/computers/${computer.id}`);
    }
  });

  it('closing the client disposes the subscription', async () => {
    const computer = await createComputer();
    try {
      const readers = await Promise.all([openEvents(computer.id), openEvents(computer.id)]);
      expect(server.core.events.listenerCount(computer.id)).toBe(2);
      readers[0]!.close();
      await eventually(() => Promise.resolve(server.core.events.listenerCount(computer.id) === 1));
      readers[1]!.close();
      await eventually(() => Promise.resolve(server.core.events.listenerCount(computer.id) === 0));
    } finally {
      await server.request('DELETE', `/computers/${computer.id}`);
    }
  });
});
