import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { killAll, serveProcess, tree, type BenchtopProcess } from '../helpers/benchtop-process.js';
import { processesOnDisplay } from '../helpers/desktop.js';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../helpers/fake-chat-completions.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { visitLoginPage } from '../helpers/page-state.js';
import { commandOf, descendants, isAlive } from '../helpers/processes.js';
import { readOnlyDisk, type ReadOnlyDisk } from '../helpers/read-only-disk.js';
import { SseReader } from '../helpers/sse.js';
import type { SettingsInput } from '../../src/main/core/config.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Parts failing under a running server: Chromium, a desktop's worker, a model provider, the data
 * dir's disk, the server process itself. Each case checks what a client sees (every request
 * answered, never a hang or a 5xx where the contract says otherwise), that what failed ends
 * cleanly and the rest keeps working, and that nothing stored is lost. Figures are printed as
 * `[faults] …` lines for docs/ROBUSTNESS.md.
 */

const figures: string[] = [];
const report = (line: string) => figures.push(line);
afterAll(() => {
  for (const line of figures) console.log(`[faults] ${line}`);
});

let fixtures: FixtureServer;
beforeAll(async () => {
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await fixtures.close();
});

/** A request that must be answered within `ms`; a hang fails the test instead of stalling it. */
async function answered(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  ms = 20_000,
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.key}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ms),
  }).catch((error: Error) => {
    throw new Error(`${method} ${path} was not answered within ${ms} ms (${error.message})`);
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text, which fails whatever expects the contract's bodies.
  }
  return { status: response.status, body: parsed, ms: Date.now() - started };
}

/** The shared Chromium's browser process (not its renderers) that Playwright started for us. */
function browserProcesses(): number[] {
  return descendants(process.pid).filter((pid) => {
    const command = commandOf(pid);
    return (
      /chrom/i.test(command) &&
      command.includes('--remote-debugging-pipe') &&
      !command.includes('--type=')
    );
  });
}

/** Every live process whose command line contains text (whoever its parent is now). */
function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => isAlive(pid) && commandOf(pid).includes(text));
}

describe('Chromium killed while actions run', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ browser: { warm_pool: 1 } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const ROUNDS = 3;
  const COMPUTERS = 3;
  const ACTIONS = [
    { path: 'screenshot', body: {} },
    { path: 'click', body: { x: 100, y: 100 } },
    { path: 'type', body: { text: 'fault' } },
    { path: 'html', body: {} },
    { path: 'scroll', body: { x: 200, y: 200, dx: 0, dy: 100 } },
    { path: 'navigate', body: { url: '' } },
  ];

  it(`ends every computer crashed, answers every request, and serves new ones (${ROUNDS} kills)`, async () => {
    let inFlightAtKill = 0;
    let answeredError = 0;
    let answered4xx = 0;
    let answeredSuccess = 0;
    const recoveries: number[] = [];
    let slowestAnswer = 0;
    let crashedWithin = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const ids: string[] = [];
      for (let i = 0; i < COMPUTERS; i++) {
        const created = await answered(server, 'POST', '/computers', {});
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        ids.push(created.body.id as string);
      }
      const [chromium] = browserProcesses();
      expect(chromium, 'the shared Chromium runs under this process').toBeDefined();
      // Its renderers and helpers carry its profile folder on their command lines.
      const profile = /--user-data-dir=(\S+)/.exec(commandOf(chromium!))![1]!;

      let killed = false;
      let pending = 0;
      let done = 0;
      /** before: sent and answered before the kill; in flight: sent before, answered after. */
      type Phase = 'before' | 'in flight' | 'after';
      const outcomes: Array<{ status: number; body: any; ms: number; phase: Phase; path: string }> =
        [];
      // Each computer gets a stream of actions, two at a time, until it has ended.
      const drive = async (id: string, lane: number) => {
        for (let n = lane; ; n += 2) {
          const action = ACTIONS[n % ACTIONS.length]!;
          const body =
            action.path === 'navigate' ? { url: `${fixtures.url}/actions.html?${n}` } : action.body;
          const sentAfter = killed;
          pending++;
          const outcome = await answered(server, 'POST', `/computers/${id}/${action.path}`, body);
          pending--;
          done++;
          const phase: Phase = sentAfter ? 'after' : killed ? 'in flight' : 'before';
          outcomes.push({ ...outcome, phase, path: action.path });
          if (phase === 'before') {
            expect(outcome.body, action.path).toMatchObject({ status: 'success' });
          } else if (outcome.status !== 200 || outcome.body.status !== 'success') {
            return;
          }
        }
      };
      const lanes = ids.flatMap((id) => [drive(id, 0), drive(id, 1)]);
      await eventually(() => done >= COMPUTERS * 4, 10_000);
      inFlightAtKill += pending;
      killed = true;
      process.kill(chromium!, 'SIGKILL');
      const killedAt = Date.now();
      await Promise.all(lanes);

      for (const outcome of outcomes) {
        if (outcome.phase === 'before') continue;
        const what = `${outcome.path} (${outcome.phase}): ${JSON.stringify(outcome.body)}`;
        expect(outcome.status, what).toBeLessThan(500);
        if (outcome.status >= 400) {
          expect(outcome.body, what).toMatchObject({
            message: expect.any(String),
            code: expect.any(String),
            request_id: expect.any(String),
          });
        }
        slowestAnswer = Math.max(slowestAnswer, outcome.ms);
        if (outcome.status >= 400) answered4xx++;
        else if (outcome.body.status === 'error') answeredError++;
        else answeredSuccess++;
      }
      for (const id of ids) {
        const computer = await eventually(async () => {
          const got = await answered(server, 'GET', `/computers/${id}`);
          return got.body.status === 'terminated' && got.body;
        });
        expect(computer.termination_reason).toBe('crashed');
      }
      crashedWithin = Math.max(crashedWithin, Date.now() - killedAt);
      // SIGKILLed, it is gone once the kernel has finished its exit (on a loaded machine that can
      // come after its pipe closed and its computers ended: seen once in CI).
      await eventually(() => !isAlive(chromium!));
      // None of the dead browser's renderers or helpers is left behind.
      await eventually(() => processesWith(profile).length === 0);

      // The server serves on, and a new computer (a new Chromium) works.
      expect((await answered(server, 'GET', '/computers')).body).toEqual([]);
      const fresh = await answered(server, 'POST', '/computers', {});
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
      const id = fresh.body.id as string;
      const navigated = await answered(server, 'POST', `/computers/${id}/navigate`, {
        url: `${fixtures.url}/actions.html`,
      });
      expect(navigated.body, JSON.stringify(navigated.body)).toMatchObject({ status: 'success' });
      const shot = await answered(server, 'POST', `/computers/${id}/screenshot`, { base64: true });
      expect(shot.body.status, shot.body.error_message).toBe('success');
      expect(shot.body.result.base64.length).toBeGreaterThan(1000);
      recoveries.push(Date.now() - killedAt);
      expect((await answered(server, 'DELETE', `/computers/${id}`)).status).toBe(204);
    }
    report(
      `Chromium SIGKILLed ${ROUNDS} times under ${COMPUTERS} computers × 2 concurrent action lanes: ` +
        `${ROUNDS * COMPUTERS} computers ended crashed, no renderer or helper of a killed ` +
        `Chromium left; ${inFlightAtKill} requests in flight at the kill; those and the ones sent ` +
        `after it were answered ${answeredError} × 200 status error, ${answered4xx} × 4xx, ` +
        `${answeredSuccess} × success, 0 × 5xx, 0 hung (slowest ${slowestAnswer} ms); all ended ` +
        `within ${crashedWithin} ms of the kill; a new computer navigated and took a ` +
        `screenshot ${recoveries.map((ms) => `${ms} ms`).join(', ')} after each kill`,
    );
  }, 90_000);
});

describe("a desktop's worker process killed", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ browser: { warm_pool: 0 }, limits: { desktops_per_org: 3 } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const ROUNDS = 2;

  /** The display a desktop's commands see, asked through the API. */
  async function displayName(id: string): Promise<string> {
    const run = await answered(server, 'POST', `/computers/${id}/exec/sync`, {
      command: 'echo $DISPLAY',
    });
    return (run.body.stdout as string).trim();
  }

  /** The nut-js worker bound to a display: a process on it whose command is the worker. */
  async function workerOf(display: string): Promise<number> {
    const pids = await processesOnDisplay(display);
    const workers = pids.filter((pid) => commandOf(pid).includes('desktop-worker'));
    expect(workers, `one worker on ${display}`).toHaveLength(1);
    return workers[0]!;
  }

  it(`ends that computer crashed with its display; another desktop and a browser keep working (${ROUNDS} kills)`, async () => {
    const create = async (body: Record<string, unknown>) => {
      const created = await answered(server, 'POST', '/computers', body);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      return created.body.id as string;
    };
    const [other, browser] = await Promise.all([create({ kind: 'desktop' }), create({})]);
    const otherDisplay = await displayName(other);
    const otherWorker = await workerOf(otherDisplay);
    let inFlight = 0;
    let answeredAfter = 0;
    let ended = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const victim = await create({ kind: 'desktop' });
      const display = await displayName(victim);
      const worker = await workerOf(display);
      const onDisplay = await processesOnDisplay(display);
      // Xvfb, openbox, xterm and its shell, and the worker.
      expect(onDisplay.length).toBeGreaterThanOrEqual(4);

      let killed = false;
      let pending = 0;
      let done = 0;
      const actions = [
        { path: 'screenshot', body: {} },
        { path: 'click', body: { x: 300, y: 200 } },
        { path: 'type', body: { text: 'x' } },
        { path: 'scroll', body: { x: 300, y: 200, dx: 0, dy: 100 } },
      ];
      const outcomes: Array<{ status: number; body: any; afterKill: boolean }> = [];
      const lane = async (start: number) => {
        for (let n = start; ; n += 2) {
          const action = actions[n % actions.length]!;
          const before = killed;
          pending++;
          const outcome = await answered(
            server,
            'POST',
            `/computers/${victim}/${action.path}`,
            action.body,
          );
          pending--;
          done++;
          outcomes.push({ ...outcome, afterKill: killed && !before });
          if (killed && outcome.body?.status !== 'success') return;
        }
      };
      const lanes = [lane(0), lane(1)];
      await eventually(() => done >= 6, 10_000);
      inFlight += pending;
      killed = true;
      process.kill(worker, 'SIGKILL');
      await Promise.all(lanes);
      for (const outcome of outcomes) {
        expect(outcome.status, JSON.stringify(outcome.body)).toBeLessThan(500);
        if (outcome.status >= 400) expectErrorBody(outcome, 'an action on the ended desktop');
        if (outcome.afterKill) answeredAfter++;
      }
      const computer = await eventually(async () => {
        const got = await answered(server, 'GET', `/computers/${victim}`);
        return got.body.status === 'terminated' && got.body;
      });
      expect(computer.termination_reason).toBe('crashed');
      ended++;
      // Its X server, window manager and terminal end with it.
      await eventually(() => onDisplay.every((pid) => !isAlive(pid)));

      // The other desktop and its worker are untouched, and work.
      expect(isAlive(otherWorker)).toBe(true);
      for (const path of ['click', 'type', 'screenshot']) {
        const body = path === 'click' ? { x: 200, y: 150 } : path === 'type' ? { text: 'a' } : {};
        const acted = await answered(server, 'POST', `/computers/${other}/${path}`, body);
        expect(acted.body, path).toMatchObject({ status: 'success' });
      }
      expect(await displayName(other)).toBe(otherDisplay);
      // So does the browser.
      const navigated = await answered(server, 'POST', `/computers/${browser}/navigate`, {
        url: `${fixtures.url}/actions.html`,
      });
      expect(navigated.body).toMatchObject({ status: 'success' });
      const shot = await answered(server, 'POST', `/computers/${browser}/screenshot`, {});
      expect(shot.body).toMatchObject({ status: 'success' });
    }
    for (const id of [other, browser]) {
      expect((await answered(server, 'DELETE', `/computers/${id}`)).status).toBe(204);
    }
    report(
      `desktop worker SIGKILLed ${ROUNDS} times: ${ended} desktops ended crashed with their Xvfb, ` +
        `openbox and xterm gone; ${inFlight} actions in flight at the kill, ${answeredAfter} answered ` +
        `after it, 0 × 5xx, 0 hung; the other desktop (same worker pid) and a browser worked after each`,
    );
  }, 90_000);
});

/**
 * A chat-completions provider in its own process: the first request of a task gets a click, each
 * later one is announced on stdout and then treated as `mode` says: `hold` (never answered, so
 * the test can kill the process while the request waits) or `cut` (headers and half a body, then
 * the connection is dropped).
 */
const PROVIDER = `
const http = require('node:http');
const mode = process.argv[1];
let count = 0;
const click = JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null,
    tool_calls: [{ id: 'c1', type: 'function',
      function: { name: 'computer', arguments: '{"action":"click","x":100,"y":100}' } }] } }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    count++;
    if (JSON.parse(body).stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1,
        model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }) + '\\n\\n');
      return setTimeout(() => res.socket.destroy(), 50);
    }
    if (count === 1) return res.writeHead(200, { 'content-type': 'application/json' }).end(click);
    console.log('request ' + count);
    if (mode === 'cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(click.length) });
      res.write(click.slice(0, 40));
      setTimeout(() => res.socket.destroy(), 50);
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

type ProviderProcess = { url: string; child: ChildProcess; requests: string[] };

function startProvider(mode: 'hold' | 'cut'): Promise<ProviderProcess> {
  const child = spawn(process.execPath, ['-e', PROVIDER, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const requests: string[] = [];
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const port = /^port (\d+)$/.exec(line)?.[1];
      if (port) resolve({ url: `http://127.0.0.1:${port}/v1`, child, requests });
      else requests.push(line);
    });
  });
}

describe('a model provider that hangs or dies mid-task', () => {
  let server: TestServer;
  let hanging: FakeChatCompletions;
  let killed: ProviderProcess;
  let cut: ProviderProcess;
  const TIMEOUT_MS = 1500;
  beforeAll(async () => {
    [hanging, killed, cut] = await Promise.all([
      startFakeChatCompletions(),
      startProvider('hold'),
      startProvider('cut'),
    ]);
    server = await startTestServer({
      browser: { warm_pool: 2 },
      models: {
        default: 'hangs',
        providers: {
          hangs: { provider: 'openai-compatible', base_url: hanging.url, timeout_ms: TIMEOUT_MS },
          killed: { provider: 'openai-compatible', base_url: killed.url },
          cut: { provider: 'openai-compatible', base_url: cut.url },
        },
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await hanging?.close();
    for (const provider of [killed, cut]) provider?.child.kill('SIGKILL');
  });

  async function finished(id: string): Promise<any> {
    return eventually(async () => {
      const task = (await answered(server, 'GET', `/agent/tasks/${id}`)).body;
      return task.exit_code !== null && task;
    }, 20_000);
  }

  /** The task failed with `pattern` in its error, its last event says the same, its computer ended. */
  async function expectFailed(id: string, pattern: RegExp): Promise<string> {
    const task = await finished(id);
    expect(task).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(task.error).toMatch(pattern);
    const reader = await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key);
    const events = (await reader.all()).map(
      (event) => event.data as { type: string; error?: string },
    );
    expect(events.at(-1)).toMatchObject({ type: 'failed', error: task.error });
    const computer = (await answered(server, 'GET', `/computers/${task.computer_id}`)).body;
    expect(computer.status).toBe('terminated');
    return task.error as string;
  }

  it('a provider that never answers: the task fails naming the timeout; responses and chat too', async () => {
    hanging.reply(...Array.from({ length: 3 }, () => ({ delayMs: 120_000, json: {} })));
    const started = Date.now();
    const task = await answered(server, 'POST', '/agent/tasks', { instruction: 'x' });
    expect(task.status).toBe(200);
    const error = await expectFailed(task.body.task_id, /did not answer within 1\.5 s.*timeout_ms/);
    const taskMs = Date.now() - started;

    const response = await answered(server, 'POST', '/v1/responses', { input: 'hello' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'failed', error: { code: 'model_timeout' } });
    const chat = await answered(server, 'POST', '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(chat.status).toBe(504);
    expect(chat.body).toMatchObject({ code: 'model_timeout', request_id: expect.any(String) });
    report(
      `provider hangs (timeout_ms ${TIMEOUT_MS}): task failed after ${taskMs} ms with "${error}"; ` +
        `/v1/responses answered 200 failed model_timeout in ${response.ms} ms; ` +
        `/v1/chat/completions 504 model_timeout in ${chat.ms} ms`,
    );
  }, 60_000);

  it('a provider process killed while a step waits on it: the task fails naming it', async () => {
    const task = await answered(server, 'POST', '/agent/tasks', {
      instruction: 'x',
      model: 'killed',
    });
    expect(task.status).toBe(200);
    // The first step's click ran; the second step's request is waiting when the process dies.
    // The dropped request is tried again, twice, and finds nobody listening.
    await eventually(() => killed.requests.length > 0, 15_000);
    killed.child.kill('SIGKILL');
    const error = await expectFailed(
      task.body.task_id,
      /could not reach the server of model "killed" at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); check that it is running and its base_url \(tried 3 times\)/,
    );
    const steps = (await answered(server, 'GET', `/agent/tasks/${task.body.task_id}`)).body.steps;
    expect(steps).toBe(1);
    report(`provider process SIGKILLed mid-request: task failed after step 1 with "${error}"`);
  });

  it('a provider that drops the connection halfway through its answer: the task fails naming it', async () => {
    const task = await answered(server, 'POST', '/agent/tasks', { instruction: 'x', model: 'cut' });
    expect(task.status).toBe(200);
    const error = await expectFailed(
      task.body.task_id,
      /model "cut" at http:\/\/127\.0\.0\.1:\d+ broke off its answer \(.+\)/,
    );
    // A streamed chat completion cut the same way ends with an error event that says so.
    const stream = await SseReader.post(`${server.url}/v1/chat/completions`, server.key, {
      model: 'cut',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const events = (await stream.all()).map((event) => event.data as any);
    expect(events[0].choices[0].delta.content).toBe('Hel');
    expect(events.at(-1).error).toMatchObject({
      code: 'model_error',
      message: expect.stringMatching(/model "cut" .* broke off its answer/),
    });
    report(
      `provider answer cut off mid-body: task failed with "${error}"; a chat stream cut after ` +
        `its first chunk ended with an error event "${events.at(-1).error.message}"`,
    );
  });

  it('keeps serving: a computer works after the provider faults', async () => {
    const created = await answered(server, 'POST', '/computers', {});
    expect(created.status).toBe(200);
    const shot = await answered(server, 'POST', `/computers/${created.body.id}/screenshot`, {});
    expect(shot.body.status).toBe('success');
    await answered(server, 'DELETE', `/computers/${created.body.id}`);
  });
});

/** docs/API.md §11: every error carries message, code and request_id. */
function expectErrorBody(answer: { status: number; body: any }, what: string) {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBeGreaterThanOrEqual(400);
  expect(answer.body, what).toMatchObject({
    message: expect.any(String),
    code: expect.any(String),
    request_id: expect.any(String),
  });
}

describe('the data dir becomes read-only while the server runs', () => {
  let disk: ReadOnlyDisk;
  let server: TestServer | undefined;
  let scripts: string;
  let settings: SettingsInput;
  beforeAll(() => {
    scripts = mkdtempSync(join(tmpdir(), 'benchtop-readonly-scripts-'));
    const scripted = (name: string, delayMs: number, output: unknown[]) => {
      const path = join(scripts, `${name}.json`);
      writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns: [{ output }] }));
      return { provider: 'scripted' as const, script: path };
    };
    settings = {
      browser: { warm_pool: 0 },
      limits: { auth_failures_before_block: 3 },
      models: {
        default: 'echo',
        providers: {
          echo: scripted('echo', 0, [{ type: 'message', text: 'stored' }]),
          slow: scripted('slow', 1500, [
            { type: 'computer_call', action: { type: 'click', x: 5, y: 5 } },
          ]),
        },
      },
    };
    disk = readOnlyDisk();
  });
  afterAll(async () => {
    await server?.close().catch(() => {});
    disk?.cleanup();
    rmSync(scripts, { recursive: true, force: true });
  });

  /** What login.html found in the computer's cookies and localStorage. */
  const visit = (id: string, query = '') =>
    visitLoginPage(
      (method, path, body) => answered(server!, method, path, body),
      fixtures.url,
      id,
      query,
    );

  it('answers writes with clear errors, keeps serving, corrupts nothing', async () => {
    const { dataDir } = disk;
    server = await startTestServer(settings, { dataDir });
    const s = server;
    // Stored before the fault.
    const keyA = await answered(s, 'POST', '/keys', {});
    expect(keyA.status).toBe(200);
    expect((await answered(s, 'PATCH', '/settings', { limits: { max_tabs: 7 } })).status).toBe(200);
    const responseA = await answered(s, 'POST', '/v1/responses', { input: 'keep me' });
    expect(responseA.body.status).toBe('completed');
    const saved = (await answered(s, 'POST', '/computers', { persistent: true })).body.id;
    expect(await visit(saved, '?login&mark=alice')).toMatchObject({ local: 'alice' });
    expect((await answered(s, 'DELETE', `/computers/${saved}`)).status).toBe(204);
    const open = (await answered(s, 'POST', '/computers', { persistent: true })).body.id;
    expect(await visit(open, '?login&mark=bob')).toMatchObject({ local: 'bob' });
    const plain = (await answered(s, 'POST', '/computers', {})).body.id;
    const task = await answered(s, 'POST', '/agent/tasks', { instruction: 'x', model: 'slow' });
    expect(task.status).toBe(200);
    const files = [
      'keys.json',
      'config.json',
      `environments/local/${saved}/meta.json`,
      `environments/local/${saved}/storage-state.json`,
    ];
    const before = new Map(files.map((file) => [file, readFileSync(join(dataDir, file), 'utf8')]));

    // The task has taken its first screenshot and waits on its model when the disk fails.
    const taskId = task.body.task_id as string;
    const following = await SseReader.open(`${s.url}/agent/tasks/${taskId}/events`, s.key);
    while (((await following.next(15_000))?.data as { type: string }).type !== 'screenshot');
    following.close();

    // What the kernel has written back when the disk fails survives it. SQLite runs with
    // synchronous=NORMAL (src/main/core/store/database.ts): a commit is not fsynced, so what was
    // committed in the last seconds (ext4 commits every 5 s, writeback within 30 s) may be lost.
    // `sync` stands for "stored a while ago"; one response is stored after it, just before the
    // fault, and whether it survived is reported, not required.
    spawnSync('sync');
    const responseLast = await answered(s, 'POST', '/v1/responses', { input: 'last words' });
    expect(responseLast.body.status).toBe('completed');
    disk.fail();
    const writes: Array<[string, { status: number; body: any }]> = [
      ['PATCH /settings', await answered(s, 'PATCH', '/settings', { limits: { max_tabs: 9 } })],
      ['POST /keys', await answered(s, 'POST', '/keys', {})],
      ['POST /v1/responses', await answered(s, 'POST', '/v1/responses', { input: 'lost' })],
      ['DELETE of a persistent computer', await answered(s, 'DELETE', `/computers/${open}`)],
      ['POST /computers', await answered(s, 'POST', '/computers', {})],
      ['POST /agent/tasks', await answered(s, 'POST', '/agent/tasks', { instruction: 'x' })],
    ];
    const refused = /(read-only|not permitted|permission denied|disk I\/O error)/;
    for (const [what, answer] of writes) {
      expectErrorBody(answer, what);
      expect(answer.status, what).toBe(503);
      expect(answer.body.code, what).toBe('unavailable');
      expect(answer.body.message, what).toMatch(
        /^Benchtop could not (write to its data dir|store the response): .+; check that its data dir is writable and has free space$/,
      );
      expect(answer.body.message, what).toMatch(refused);
    }
    // An action that needs the disk (a screenshot is a file) fails as an action, saying why.
    const shot = await answered(s, 'POST', `/computers/${plain}/screenshot`, {});
    expect(shot.status).toBe(200);
    expect(shot.body).toMatchObject({
      status: 'error',
      error_message: expect.stringMatching(refused),
    });
    // Failed authentications still count and block, though the block list cannot be published.
    const bad = { authorization: 'Bearer sk_wrong_aaaaaaaaaaaaaaaaaaaa' };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await fetch(`${s.url}/computers`, { headers: bad })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 403]);
    for (const block of s.core.guards.failures.blocks()) s.core.guards.failures.lift(block.ip);

    // The task waiting on its model fails once the answer cannot be stored, and says so; the
    // server does not go down with it.
    const failedTask = await eventually(async () => {
      const got = (await answered(s, 'GET', `/agent/tasks/${taskId}`)).body;
      return got.status === 'failed' && got;
    }, 10_000);
    expect(failedTask.error).toMatch(/could not store the response: .+/);
    expect(failedTask.error).toMatch(refused);
    // Reads go on.
    expect((await answered(s, 'GET', '/health')).status).toBe(200);
    expect((await answered(s, 'GET', `/v1/responses/${responseA.body.id}`)).body).toEqual(
      responseA.body,
    );
    expect((await answered(s, 'GET', '/settings')).body.settings.limits.max_tabs).toBe(7);
    expect((await answered(s, 'GET', '/keys')).body).toHaveLength(1);
    const listed = (await answered(s, 'GET', '/computers?type=persistent')).body;
    expect(listed.map((environment: { id: string }) => environment.id)).toEqual([saved]);
    expect((await answered(s, 'GET', `/computers/${open}`)).body.status).toBe('terminated');

    // Closing on the broken disk still ends everything: no Chromium of this server is left.
    expect(browserProcesses().length).toBeGreaterThan(0);
    await s.close().catch(() => {});
    server = undefined;
    await eventually(() => browserProcesses().length === 0);
    disk.repair();
    for (const [file, text] of before) {
      expect(readFileSync(join(dataDir, file), 'utf8'), file).toBe(text);
      JSON.parse(text);
    }
    const db = new Database(join(dataDir, 'benchtop.sqlite'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    server = await startTestServer(settings, { dataDir });
    const again = server;
    const withKeyA = await fetch(`${again.url}/computers`, {
      headers: { authorization: `Bearer ${keyA.body.key}` },
    });
    expect(withKeyA.status).toBe(200);
    expect((await answered(again, 'GET', `/v1/responses/${responseA.body.id}`)).body).toEqual(
      responseA.body,
    );
    expect((await answered(again, 'GET', '/settings')).body.settings.limits.max_tabs).toBe(7);
    const last = await answered(again, 'GET', `/v1/responses/${responseLast.body.id}`);
    const lastKept = last.status === 200;
    if (lastKept) expect(last.body).toEqual(responseLast.body);
    else expect(last.status).toBe(404);
    // The task's end could not be stored: after the restart it reads as ended by the shutdown.
    const afterRestart = (await answered(again, 'GET', `/agent/tasks/${taskId}`)).body;
    expect(afterRestart).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(afterRestart.error).toMatch(/^shutdown/);
    const restored = await answered(again, 'POST', '/computers', { environment_id: saved });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(await visit(restored.body.id, '')).toMatchObject({ cookie: 'alice', local: 'alice' });
    // Writes work again.
    expect((await answered(again, 'POST', '/keys', {})).status).toBe(200);
    expect((await answered(again, 'POST', '/v1/responses', { input: 'again' })).body.status).toBe(
      'completed',
    );
    report(
      `data dir read-only (${disk.how}): ${writes.length} kinds of write answered 503 unavailable ` +
        `naming the refusal (${writes.map(([what]) => what).join(', ')}); a screenshot answered ` +
        `200 status error; bad keys 401 ×3 then 403 ip_blocked; a task waiting on its model failed ` +
        `saying its response could not be stored; every read kept working; after ` +
        `repair and restart ` +
        `${files.length} files byte-identical, SQLite integrity ok, key, response, settings and ` +
        `environment intact; the response committed just before the fault (after the last ` +
        `writeback) was ${lastKept ? 'kept' : 'lost, as synchronous=NORMAL allows'}`,
    );
  }, 90_000);
});

describe('the server process SIGKILLed, then started again on its data dir', () => {
  let dataDir: string;
  let configDir: string;
  let config: string;
  const started: BenchtopProcess[] = [];
  let seen: number[] = [];
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'benchtop-sigkill-'));
    configDir = mkdtempSync(join(tmpdir(), 'benchtop-sigkill-config-'));
    config = join(configDir, 'config.json');
    const script = (name: string, delayMs: number, turns: unknown[]) => {
      const path = join(configDir, `${name}.json`);
      writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
      return { provider: 'scripted', script: path };
    };
    writeFileSync(
      config,
      JSON.stringify({
        models: {
          default: 'echo',
          providers: {
            echo: script('echo', 0, [
              { output: [{ type: 'message', text: 'one' }] },
              { output: [{ type: 'message', text: 'two' }] },
              { output: [{ type: 'message', text: 'three' }] },
            ]),
            answer: script('answer', 0, [
              { output: [{ type: 'computer_call', action: { type: 'answer', result: '42' } }] },
            ]),
            slow: script('slow', 5000, [
              { output: [{ type: 'computer_call', action: { type: 'click', x: 5, y: 5 } }] },
            ]),
          },
        },
      }),
    );
  });
  afterAll(async () => {
    for (const server of started) server.child.kill('SIGKILL');
    await killAll(seen);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  });

  const visit = (server: BenchtopProcess, key: string, id: string, query: string) =>
    visitLoginPage(
      (method, path, body) => server.request(method, path, body, key),
      fixtures.url,
      id,
      query,
    );

  it('keeps keys, environments, responses and tasks; a running task ends failed with shutdown', async () => {
    const env = { BENCHTOP_CONFIG: config };
    const first = await serveProcess(dataDir, env);
    started.push(first);
    const key = first.firstKey!;
    expect(key).toMatch(/^sk_/);
    const keyB = (await first.request('POST', '/keys', {}, key)).body.key as string;
    expect(keyB).toMatch(/^sk_/);
    // An environment saved by a delete.
    const computer = (await first.request('POST', '/computers', { persistent: true }, key)).body;
    expect(await visit(first, key, computer.id, '?login&mark=carol')).toMatchObject({
      local: 'carol',
    });
    expect(
      (await first.request('DELETE', `/computers/${computer.id}`, undefined, key)).status,
    ).toBe(204);
    // A chain of two responses.
    const one = (await first.request('POST', '/v1/responses', { input: 'first' }, key)).body;
    const two = (
      await first.request(
        'POST',
        '/v1/responses',
        { input: 'next', previous_response_id: one.id },
        key,
      )
    ).body;
    expect([one.status, two.status]).toEqual(['completed', 'completed']);
    // A finished task and a running one.
    const done = (
      await first.request('POST', '/agent/tasks', { instruction: 'x', model: 'answer' }, key)
    ).body.task_id as string;
    const doneTask = await eventually(async () => {
      const got = (await first.request('GET', `/agent/tasks/${done}`, undefined, key)).body;
      return got.status === 'completed' && got;
    }, 15_000);
    const running = (
      await first.request('POST', '/agent/tasks', { instruction: 'x', model: 'slow' }, key)
    ).body.task_id as string;
    // It has taken its first screenshot and waits on its model.
    const following = await SseReader.open(`${first.url}/agent/tasks/${running}/events`, key);
    while (((await following.next(15_000))?.data as { type: string }).type !== 'screenshot');
    following.close();
    const doneEvents = (await first.request('GET', `/agent/tasks/${done}/events`, undefined, key))
      .text;

    seen = tree(first.child.pid!);
    const chromium = seen.filter((pid) => /chrom/i.test(commandOf(pid)));
    expect(chromium.length).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    expect(await first.exited()).toBe(null);
    const killedAt = Date.now();
    // Chromium notices its pipe closed and exits; nothing of the killed server stays.
    const orphaned = await eventually(() => seen.every((pid) => !isAlive(pid)), 10_000).then(
      () => [],
      () => seen.filter(isAlive).map((pid) => commandOf(pid).slice(0, 80)),
    );
    const orphanMs = Date.now() - killedAt;
    expect(orphaned).toEqual([]);

    const second = await serveProcess(dataDir, env);
    started.push(second);
    expect(second.firstKey, 'no new key on a restart').toBeUndefined();
    for (const stored of [key, keyB]) {
      expect((await second.request('GET', '/computers', undefined, stored)).status).toBe(200);
    }
    expect((await second.request('GET', '/keys', undefined, key)).body).toHaveLength(2);
    const environments = (await second.request('GET', '/computers?type=persistent', undefined, key))
      .body;
    expect(environments.map((environment: { id: string }) => environment.id)).toEqual([
      computer.id,
    ]);
    const restored = (
      await second.request('POST', '/computers', { environment_id: computer.id }, key)
    ).body;
    expect(await visit(second, key, restored.id, '')).toMatchObject({
      cookie: 'carol',
      local: 'carol',
    });
    expect((await second.request('GET', `/v1/responses/${one.id}`, undefined, key)).body).toEqual(
      one,
    );
    expect((await second.request('GET', `/v1/responses/${two.id}`, undefined, key)).body).toEqual(
      two,
    );
    const three = (
      await second.request(
        'POST',
        '/v1/responses',
        { input: 'more', previous_response_id: two.id },
        key,
      )
    ).body;
    expect(three.output[0].content[0].text).toBe('three');
    expect((await second.request('GET', `/agent/tasks/${done}`, undefined, key)).body).toEqual(
      doneTask,
    );
    expect((await second.request('GET', `/agent/tasks/${done}/events`, undefined, key)).text).toBe(
      doneEvents,
    );
    const interrupted = (await second.request('GET', `/agent/tasks/${running}`, undefined, key))
      .body;
    expect(interrupted).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(interrupted.error).toMatch(/^shutdown/);
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
    // What a clean stop removes; the killed server's computers could not remove theirs.
    const leftWorkspaces = readdirSync(join(dataDir, 'workspaces')).length;
    report(
      `server SIGKILLed with 2 stored keys, 1 environment, a chain of 2 responses, a finished and ` +
        `a running task: after restart both keys worked, the environment restored (cookie and ` +
        `localStorage), the chain continued, the finished task and its events were identical, the ` +
        `running one read failed "${interrupted.error}"; the killed server's ${seen.length - 1} ` +
        `descendants (Chromium) were gone ${orphanMs} ms after the kill; ${leftWorkspaces} ` +
        `workspace folders of computers the killed server ran were left in the data dir`,
    );
  }, 90_000);
});
