import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A cancel reaches the action in flight: a task cancelled during a 55 s wait or a navigation to a
 * page that never answers ends at once. Without that, each case would outlast its test's timeout
 * (the wait runs 55 s, the navigation 30 s before it times out).
 */

/** A server that takes requests and never answers them; it keeps them to show they came. */
type HangingServer = {
  url: string;
  requests: IncomingMessage[];
  closed: number;
  close(): Promise<void>;
};

async function startHangingServer(): Promise<HangingServer> {
  const state = { requests: [] as IncomingMessage[], closed: 0 };
  const server: Server = createServer((req) => {
    state.requests.push(req);
    req.socket.once('close', () => (state.closed += 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get closed() {
      return state.closed;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'benchtop-cancel-scripts-'));
function script(name: string, action: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ turns: [{ output: [{ type: 'computer_call', action }] }] }));
  return path;
}

let server: TestServer;
let hanging: HangingServer;

beforeAll(async () => {
  hanging = await startHangingServer();
  const scripted = (path: string) => ({ provider: 'scripted' as const, script: path });
  server = await startTestServer({
    models: {
      default: 'waiter',
      providers: {
        waiter: scripted(script('waiter', { type: 'wait', ms: 55_000 })),
        navigator: scripted(script('navigator', { type: 'navigate', url: `${hanging.url}/never` })),
      },
    },
  });
});
afterAll(async () => {
  await server.close();
  await hanging.close();
});

/** Follows a task's events until its action of this type was reported (it is then under way). */
async function actionStarted(id: string, type: string): Promise<void> {
  const reader = await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key);
  try {
    for (;;) {
      const event = (await reader.next(20_000))?.data as
        { type: string; action?: { type: string } } | undefined;
      if (!event) throw new Error(`the task ended before its ${type} action`);
      if (event.type === 'action' && event.action?.type === type) return;
    }
  } finally {
    reader.close();
  }
}

async function cancelAndFinish(id: string) {
  const cancelled = await server.request('POST', `/agent/tasks/${id}/cancel`);
  expect(cancelled.body).toEqual({ status: 'cancelled' });
  return eventually(async () => {
    const task = (await server.request('GET', `/agent/tasks/${id}`)).body;
    return task.exit_code !== null && task;
  }, 10_000);
}

describe('cancelling a task', () => {
  it('ends it during a long wait', { timeout: 20_000 }, async () => {
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Wait a minute',
      model: 'waiter',
    });
    expect(started.status).toBe(200);
    const id = started.body.task_id as string;
    await actionStarted(id, 'wait');
    const done = await cancelAndFinish(id);
    expect(done).toMatchObject({ status: 'cancelled', exit_code: 130 });
    await eventually(
      async () =>
        (await server.request('GET', `/computers/${started.body.computer_id}`)).body.status ===
        'terminated',
    );
  });

  it(
    'ends it during a navigation that never loads, and stops the loading',
    { timeout: 20_000 },
    async () => {
      const started = await server.request('POST', '/agent/tasks', {
        instruction: 'Open the page',
        model: 'navigator',
        kind: 'browser',
      });
      expect(started.status).toBe(200);
      const id = started.body.task_id as string;
      await actionStarted(id, 'navigate');
      // The page's request reached the server: the navigation is under way and will never load.
      await eventually(() => hanging.requests.length === 1, 10_000);
      const done = await cancelAndFinish(id);
      expect(done).toMatchObject({ status: 'cancelled', exit_code: 130 });
      // The browser gave the page up (its connection closed) rather than leaving it loading.
      await eventually(() => hanging.closed >= 1, 10_000);
    },
  );
});
