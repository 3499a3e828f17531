import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComputerEvent } from '../../src/shared/events.js';
import { ExecStream, stderrOf, stdoutOf } from '../helpers/ndjson.js';
import { processesWith } from '../helpers/processes.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let id: string;
let workspace: string;

const RETRY = { 'x-stainless-retry-count': '1' };
const sync = (body: unknown, headers?: Record<string, string>, computer = id) =>
  server.request('POST', `/computers/${computer}/exec/sync`, body, { headers });
const inWorkspace = (file: string) => readFileSync(join(workspace, file), 'utf8');
/** Resolves once a command wrote the file: it is running. */
const wroteFile = (file: string) => eventually(() => existsSync(join(workspace, file)), 10_000);

/** Resolves at the computer's first exec_output event (its command runs); call before starting it. */
function firstOutput(computer: string): Promise<void> {
  return new Promise((resolve) => {
    const dispose = server.core.events.subscribe(computer, (event) => {
      if (event.type !== 'exec_output') return;
      dispose();
      resolve();
    });
  });
}

async function exec(body: unknown, headers?: Record<string, string>) {
  const stream = await ExecStream.open(server, id, body, headers);
  expect(stream.response.status).toBe(200);
  expect(stream.response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  return stream.all();
}

async function createComputer(on = server): Promise<string> {
  const response = await on.request('POST', '/computers', {});
  expect(response.status, response.text).toBe(200);
  return response.body.id as string;
}

beforeAll(async () => {
  server = await startTestServer();
  id = await createComputer();
  workspace = server.core.computers.get('local', id).spec.workspace;
});
afterAll(async () => {
  await server?.close();
});

describe('POST /computers/{id}/exec', () => {
  it('streams stdout and stderr in order, then exactly one exit line', async () => {
    const lines = await exec({
      command: 'echo out1; sleep 0.5; echo err1 >&2; sleep 0.5; echo out2; exit 3',
    });
    expect(lines).toEqual([
      { type: 'stdout', data: 'out1\n' },
      { type: 'stderr', data: 'err1\n' },
      { type: 'stdout', data: 'out2\n' },
      { type: 'exit', code: 3 },
    ]);
  });

  it('sends each line as it comes, not when the command ends', async () => {
    const started = performance.now();
    const stream = await ExecStream.open(server, id, { command: 'echo first; sleep 1.5; echo x' });
    expect(await stream.next()).toEqual({ type: 'stdout', data: 'first\n' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await stream.all()).at(-1)).toEqual({ type: 'exit', code: 0 });
    expect(performance.now() - started).toBeGreaterThan(1400);
  });

  it('keeps newlines inside the data and never sends a blank line', async () => {
    const response = await fetch(`${server.url}/computers/${id}/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: "printf '\\n\\n\\n'; printf 'a\\n\\nb' >&2; echo" }),
    });
    const raw = await response.text();
    expect(raw.endsWith('\n')).toBe(true);
    const lines = raw.slice(0, -1).split('\n');
    for (const line of lines) expect(line.trim()).not.toBe('');
    const parsed = lines.map((line) => JSON.parse(line) as { type: string });
    expect(stdoutOf(parsed as never)).toBe('\n\n\n\n');
    expect(stderrOf(parsed as never)).toBe('a\n\nb');
    expect(parsed.filter((line) => line.type === 'exit')).toEqual([{ type: 'exit', code: 0 }]);
  });

  it('cuts large output into pieces of at most 64 KiB, never inside a character', async () => {
    const ascii = await exec({ command: "head -c 300000 /dev/zero | tr '\\0' x" });
    const multibyte = await exec({ command: "yes 'é€😀' | head -n 30000" });
    for (const lines of [ascii, multibyte]) {
      const output = lines.flatMap((line) => (line.type === 'stdout' ? [line] : []));
      expect(output.length).toBeGreaterThan(1);
      for (const line of output) expect(Buffer.byteLength(line.data)).toBeLessThanOrEqual(65_536);
    }
    expect(stdoutOf(ascii)).toBe('x'.repeat(300_000));
    const text = stdoutOf(multibyte);
    expect(text).not.toContain('\uFFFD');
    expect(text).toBe('é€😀\n'.repeat(30_000));
  });

  it('answers a problem found before the start with one error line, still 200', async () => {
    for (const body of [
      {},
      { command: '' },
      { command: 5 },
      { command: 'true', cwd: 'does/not/exist' },
      { command: 'true', timeout_seconds: 1e9 },
      { command: 'true', env: { A: 1 } },
    ]) {
      const lines = await exec(body);
      expect(lines, JSON.stringify(body)).toHaveLength(1);
      expect(lines[0]).toMatchObject({ type: 'error', code: 'invalid_request' });
      expect((lines[0] as { message: string }).message).toMatch(/command|cwd|timeout|env/);
    }
  });

  it('a timeout kills the whole process group and ends with exit code -1', async () => {
    const started = performance.now();
    const lines = await exec({ command: 'sleep 300.101 & wait', timeout_seconds: 1 });
    expect(lines.at(-1)).toEqual({ type: 'exit', code: -1 });
    expect(performance.now() - started).toBeLessThan(5000);
    await eventually(() => processesWith('300.101').length === 0, 3000);
  });

  it('closing the connection kills the command and what it started', async () => {
    const stream = await ExecStream.open(server, id, {
      command: 'sleep 300.102 & echo started; wait',
    });
    await stream.until((line) => line.type === 'stdout' && line.data.includes('started'));
    // The shell (its command line holds the marker) and the sleep it started.
    expect(processesWith('300.102').length).toBeGreaterThanOrEqual(2);
    stream.abort();
    await eventually(() => processesWith('300.102').length === 0, 8000);
  });
});

describe('POST /computers/{id}/exec/sync', () => {
  it('answers stdout, stderr and the exit code once the command ends', async () => {
    const ok = await sync({ command: 'echo hello; echo oops >&2' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ stdout: 'hello\n', stderr: 'oops\n', exit_code: 0 });
    expect((await sync({ command: 'exit 7' })).body.exit_code).toBe(7);
    expect((await sync({ command: 'false' })).body.exit_code).toBe(1);
    const timedOut = await sync({ command: 'echo before; sleep 30', timeout_seconds: 0.5 });
    expect(timedOut.body).toEqual({ stdout: 'before\n', stderr: '', exit_code: -1 });
  });

  it('truncates each stream at max_output_length and says so', async () => {
    const response = await sync({
      command: "head -c 5000 /dev/zero | tr '\\0' a; echo err >&2",
      max_output_length: 1000,
    });
    expect(response.body).toEqual({
      stdout: 'a'.repeat(1000),
      stderr: 'err\n',
      exit_code: 0,
      truncated: true,
    });
  });

  it('runs in the workspace (at /workspace); relative cwd stays inside it; files persist between commands', async () => {
    expect((await sync({ command: 'pwd -P' })).body.stdout).toBe('/workspace\n');
    await sync({ command: 'mkdir -p sub/dir && echo hello > sub/dir/note.txt' });
    const read = await sync({ command: 'pwd -P; cat note.txt', cwd: 'sub/dir' });
    expect(read.body.stdout).toBe('/workspace/sub/dir\nhello\n');
    expect(readFileSync(join(workspace, 'sub/dir/note.txt'), 'utf8')).toBe('hello\n');
    expect((await sync({ command: 'pwd', cwd: '/tmp' })).body.stdout).toBe('/tmp\n');
    expect((await sync({ command: 'pwd', cwd: '/workspace/sub' })).body.stdout).toBe(
      '/workspace/sub\n',
    );
  });

  it("merges the environment: server's, then the computer's, then the body's", async () => {
    const session = server.core.computers.get('local', id);
    Object.assign(session.spec.env, { BT_SESSION: 'session', BT_BOTH: 'session' });
    try {
      const response = await sync({
        command: 'echo "$BT_SESSION $BT_BOTH $BT_BODY"; test -n "$PATH"',
        env: { BT_BOTH: 'body', BT_BODY: 'body' },
      });
      expect(response.body).toEqual({ stdout: 'session body body\n', stderr: '', exit_code: 0 });
    } finally {
      delete session.spec.env.BT_SESSION;
      delete session.spec.env.BT_BOTH;
    }
  });

  it('a command whose computer ends while it is being started answers as killed', async () => {
    // A new computer's first command starts its sandbox first: the computer ends meanwhile.
    const other = await createComputer();
    const running = sync({ command: 'sleep 300' }, undefined, other);
    await server.request('DELETE', `/computers/${other}`);
    const response = await running;
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ exit_code: -1 });
  });

  it('ending the computer kills its running command', async () => {
    const other = await createComputer();
    const started = firstOutput(other);
    const running = sync({ command: 'echo started; sleep 300' }, undefined, other);
    await started;
    await server.request('DELETE', `/computers/${other}`);
    const response = await running;
    expect(response.body).toMatchObject({ exit_code: -1 });
  });
});

describe('ending a computer', () => {
  it('ends what its commands left running in the background', async () => {
    const computer = await createComputer();
    const ran = await sync(
      {
        // In the background, and detached twice over: its own session, its parent gone.
        command:
          'sleep 300.103 > /dev/null 2>&1 & setsid sh -c "sleep 300.104 > /dev/null 2>&1 &" < /dev/null',
      },
      undefined,
      computer,
    );
    expect(ran.body.exit_code).toBe(0);
    // Both are running (the detached one may take a moment to start on a busy machine)...
    await eventually(
      () => processesWith('sleep 300.103').length > 0 && processesWith('sleep 300.104').length > 0,
      10_000,
    );
    await server.request('DELETE', `/computers/${computer}`);
    // ...and neither outlives the computer.
    await eventually(() => processesWith('300.10').length === 0, 10_000);
  });
});

describe('a re-sent request joins the command instead of running it again', () => {
  it('exec/sync: while running, after it ended; a request that is not a retry runs again', async () => {
    const body = { command: 'echo run >> sync.log; sleep 1; echo done' };
    const first = sync(body);
    await wroteFile('sync.log');
    // Same body with another key order and a default spelled out: still the same request.
    const retry = sync({ timeout_seconds: 120, ...body }, RETRY);
    const expected = { stdout: 'done\n', stderr: '', exit_code: 0 };
    for (const response of await Promise.all([first, retry])) {
      expect(response.body).toEqual(expected);
    }
    expect(inWorkspace('sync.log')).toBe('run\n');
    expect((await sync(body, { 'x-stainless-retry-count': '2' })).body).toEqual(expected);
    expect(inWorkspace('sync.log')).toBe('run\n');
    await sync(body);
    expect(inWorkspace('sync.log')).toBe('run\nrun\n');
  });

  it('exec: the retry gets the output from the start, then follows', async () => {
    const body = { command: 'echo run >> stream.log; echo a; sleep 1; echo b' };
    const first = await ExecStream.open(server, id, body);
    await first.until((line) => line.type === 'stdout' && line.data.includes('a'));
    const retry = await ExecStream.open(server, id, body, RETRY);
    const [one, two] = await Promise.all([first.all(), retry.all()]);
    for (const lines of [one, two]) {
      expect(stdoutOf(lines)).toBe('a\nb\n');
      expect(lines.at(-1)).toEqual({ type: 'exit', code: 0 });
    }
    expect(inWorkspace('stream.log')).toBe('run\n');
  });

  it('exec: a retry arriving just after the client left still joins the command', async () => {
    const body = { command: 'echo run >> left.log; echo a; sleep 1; echo b' };
    const first = await ExecStream.open(server, id, body);
    await first.until((line) => line.type === 'stdout' && line.data.includes('a'));
    // Whichever the server sees first, the leave or the retry, the retry joins: the command is
    // killed only when nobody follows it for a grace period (test/unit/command-run.test.ts).
    first.abort();
    const lines = await exec(body, RETRY);
    expect(stdoutOf(lines)).toBe('a\nb\n');
    expect(lines.at(-1)).toEqual({ type: 'exit', code: 0 });
    expect(inWorkspace('left.log')).toBe('run\n');
  });

  it('debug: joins only a command of the same endpoint', async () => {
    const body = { command: 'echo run >> debug.log; sleep 0.5; echo done' };
    const debug = (headers?: Record<string, string>) =>
      server.request('POST', `/computers/${id}/debug`, body, { headers });
    const first = debug();
    await wroteFile('debug.log');
    const [a, b] = await Promise.all([first, debug(RETRY)]);
    expect(a.body.result).toMatchObject({ stdout: 'done\n', exit_code: 0 });
    expect(b.body.result).toEqual(a.body.result);
    expect(inWorkspace('debug.log')).toBe('run\n');
    await sync(body, RETRY);
    expect(inWorkspace('debug.log')).toBe('run\nrun\n');
  });
});

describe('POST /computers/{id}/debug', () => {
  it('answers debug_response as stdout followed by stderr, truncated', async () => {
    const response = await server.request('POST', `/computers/${id}/debug`, {
      command: 'echo out; sleep 0.1; echo err >&2; exit 3',
      max_output_length: 6,
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({
      status: 'success',
      result: { debug_response: 'out\ner', stdout: 'out\n', stderr: 'err\n', exit_code: 3 },
    });
  });
});

describe('events', () => {
  it('publishes exec_output as it comes and an action_response at the end', async () => {
    const events: ComputerEvent[] = [];
    const dispose = server.core.events.subscribe(id, (event) => events.push(event));
    const response = await sync({ command: 'printf hi; sleep 0.1; printf oops >&2' });
    dispose();
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^req_/);
    for (const event of events) {
      expect(event).toMatchObject({ computer_id: id, request_id: requestId });
      expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const output = events.flatMap((event) =>
      event.type === 'exec_output'
        ? [[Buffer.from(event.data, 'base64').toString('utf8'), event.is_stderr]]
        : [],
    );
    expect(output).toEqual([
      ['hi', false],
      ['oops', true],
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'action_response',
      status: 'success',
      exit_code: 0,
      stdout: 'hi',
      stderr: 'oops',
    });
  });
});

describe('exec switched off in settings', () => {
  let off: TestServer;
  let computer: string;

  beforeAll(async () => {
    off = await startTestServer({ exec: { enabled: false }, browser: { warm_pool: 0 } });
    computer = await createComputer(off);
  });
  afterAll(async () => {
    await off?.close();
  });

  it.each(['exec', 'exec/sync', 'debug'])(
    'POST /computers/{id}/%s → 403 exec_disabled',
    async (path) => {
      const response = await off.request('POST', `/computers/${computer}/${path}`, {
        command: 'touch ran',
      });
      expect(response.status, response.text).toBe(403);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toMatchObject({ code: 'exec_disabled', message: /exec\.enabled/ });
      const workspaceOff = off.core.computers.get('local', computer).spec.workspace;
      expect(() => readFileSync(join(workspaceOff, 'ran'))).toThrow();
    },
  );
});
