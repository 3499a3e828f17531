import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/shared/client/api-client.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/** GET /agent/tasks filters: computer_id, status (a comma-separated list) and limit, newest first. */

const dir = mkdtempSync(join(tmpdir(), 'benchtop-task-list-'));
function script(name: string, turns: unknown[], delayMs = 0): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
  return path;
}

let server: TestServer;
let computer: string;
/** Oldest first: completed on `computer`, failed on `computer`, completed elsewhere, running on `computer`. */
const ids: string[] = [];

async function start(model: string, computerId?: string): Promise<string> {
  const started = await server.api.call('tasks.start', {
    body: { instruction: 'x', model, ...(computerId && { computer_id: computerId }) },
  });
  ids.push(started.task_id);
  return started.task_id;
}

const list = async (query: Record<string, string | number> = {}) =>
  (await server.api.call('tasks.list', { query })).map((task) => task.task_id);

beforeAll(async () => {
  server = await startTestServer({
    models: {
      default: 'answer',
      providers: {
        answer: {
          provider: 'scripted',
          script: script('answer', [
            { output: [{ type: 'computer_call', action: { type: 'answer', result: '42' } }] },
          ]),
        },
        // Thinks for a minute: its task is still running when the filters are read.
        thinker: {
          provider: 'scripted',
          script: script('thinker', [{ output: [{ type: 'message', text: 'done' }] }], 60_000),
        },
        dead: { provider: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
      },
    },
  });
  computer = (await server.api.call('computers.create')).id;
  // A timeout says where the task was (its status, step, error and events).
  const done = async (id: string, status: string) =>
    eventually(async () => {
      const task = await server.api.call('tasks.get', { params: { id } });
      if (task.status === status) return true;
      const events = server.core.tasks.events('local', id).map((event) => event.type);
      throw new Error(
        `task ${id} is ${task.status} at step ${task.steps} (${task.error ?? 'no error'}); its events: ${events.join(', ')}`,
      );
    }, 20_000);
  await done(await start('answer', computer), 'completed');
  await done(await start('dead', computer), 'failed');
  await done(await start('answer'), 'completed');
  await start('thinker', computer);
});

afterAll(async () => {
  if (ids[3]) await server?.api.call('tasks.cancel', { params: { id: ids[3] } });
  await server?.close();
});

describe('GET /agent/tasks', () => {
  it('lists every task newest first without filters', async () => {
    expect(await list()).toEqual([...ids].reverse());
  });

  it('filters by computer', async () => {
    expect(await list({ computer_id: computer })).toEqual([ids[3], ids[1], ids[0]]);
    expect(await list({ computer_id: 'comp_none' })).toEqual([]);
  });

  it('filters by one status or several', async () => {
    expect(await list({ status: 'completed' })).toEqual([ids[2], ids[0]]);
    expect(await list({ status: 'failed,running' })).toEqual([ids[3], ids[1]]);
  });

  it('keeps the newest up to limit, after filtering', async () => {
    expect(await list({ limit: 2 })).toEqual([ids[3], ids[2]]);
    expect(await list({ computer_id: computer, status: 'running,paused', limit: 1 })).toEqual([
      ids[3],
    ]);
    expect(await list({ computer_id: computer, status: 'completed', limit: 1 })).toEqual([ids[0]]);
  });

  it('refuses a status or a limit that is not one, naming the parameter', async () => {
    const refused = async (query: Record<string, string>) => {
      const error = await server.api.call('tasks.list', { query }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      return error as ApiError;
    };
    expect(await refused({ status: 'sleeping' })).toMatchObject({
      status: 400,
      code: 'invalid_request',
      param: 'status.0',
      message: expect.stringContaining('running'),
    });
    expect(await refused({ limit: '0' })).toMatchObject({ status: 400, param: 'limit' });
    expect(await refused({ limit: '1001' })).toMatchObject({ status: 400, param: 'limit' });
  });
});
