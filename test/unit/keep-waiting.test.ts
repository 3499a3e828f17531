import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { BenchtopError } from '../../src/main/core/errors.js';
import { errorMapper } from '../../src/main/server/errors.js';
import { endKept, keepWaiting } from '../../src/main/server/keep-waiting.js';
import { setSseOptions } from '../../src/main/server/sse.js';

/**
 * An answer kept alive while it waits (a held action's): over real HTTP from an Express app with
 * the server's error mapper, heartbeats every 50 ms.
 */

const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const late = (error: { message: string }) => ({ status: 'error', error_message: error.message });

/** An app whose one route waits `ms` after keepWaiting, then answers or throws. */
async function serve(ms: number, outcome: () => unknown): Promise<string> {
  const app = express();
  setSseOptions(app, { heartbeatMs: 50 });
  app.post('/act', async (_req, res, next) => {
    keepWaiting(res, late);
    await later(ms);
    try {
      const answer = outcome();
      if (!endKept(res, answer)) res.json(answer);
    } catch (error) {
      next(error);
    }
  });
  const logged: string[] = [];
  app.use(errorMapper((line) => logged.push(line)));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/act`;
}

describe('keepWaiting', () => {
  it('sends the status line and spaces while it waits, then the answer: one JSON value', async () => {
    const url = await serve(300, () => ({ status: 'success' }));
    const answer = await fetch(url, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await answer.text();
    expect(text).toMatch(/^ {2,}\{"status":"success"\}$/);
  });

  it('answers as usual when the answer comes before the first heartbeat', async () => {
    const url = await serve(0, () => ({ status: 'success' }));
    const answer = await fetch(url, { method: 'POST' });
    expect(await answer.text()).toBe('{"status":"success"}');
  });

  it('turns an error after the status line into the route’s own failed answer', async () => {
    const url = await serve(300, () => {
      throw new BenchtopError('not_found', 'no tab tab_x on this computer');
    });
    const answer = await fetch(url, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(await answer.text())).toEqual({
      status: 'error',
      error_message: 'no tab tab_x on this computer',
    });
  });

  it('an error before the first heartbeat keeps its own status', async () => {
    const url = await serve(0, () => {
      throw new BenchtopError('not_found', 'no tab tab_x on this computer');
    });
    const answer = await fetch(url, { method: 'POST' });
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ code: 'not_found' });
  });
});
