import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';
import { ComputerEvent } from '../../src/shared/events.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { PACED_FLOOD } from '../helpers/ndjson.js';
import { pageState } from '../helpers/page-state.js';
import { commandOf, descendants, isAlive } from '../helpers/processes.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Holes a security review found: a stalled events reader, batches outliving their client and
 * running twice, header-breaking stealth and proxy strings, popups past limits.max_tabs, and
 * Chromium without its sandbox.
 */

const MAX_TABS = 3;
let server: TestServer;
let fixtures: FixtureServer;
const created: string[] = [];

beforeAll(async () => {
  [server, fixtures] = await Promise.all([
    startTestServer({ limits: { max_tabs: MAX_TABS } }),
    startFixtureServer(),
  ]);
});
afterAll(async () => {
  await Promise.all(created.map((id) => server?.request('DELETE', `/computers/${id}`)));
  await Promise.all([server?.close(), fixtures?.close()]);
});

async function createComputer(body: unknown = {}): Promise<string> {
  const response = await server.request('POST', '/computers', body);
  expect(response.status, response.text).toBe(200);
  created.push(response.body.id);
  return response.body.id as string;
}

async function openEvents(id: string): Promise<SseReader> {
  const reader = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
  expect(reader.response.status).toBe(200);
  return reader;
}

/** Reads events until one matches, returning everything read; fails if the stream ends first. */
async function readUntil(
  reader: SseReader,
  match: (event: ComputerEvent, seen: ComputerEvent[]) => boolean,
  timeoutMs = 20_000,
): Promise<ComputerEvent[]> {
  const seen: ComputerEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const raw = await reader.next(Math.max(deadline - Date.now(), 1)).catch((error: Error) => {
      throw new Error(`${error.message}; seen: ${summary(seen)}`);
    });
    if (!raw) throw new Error(`the stream ended first; seen: ${summary(seen)}`);
    const event = ComputerEvent.parse(raw.data);
    seen.push(event);
    if (match(event, seen)) return seen;
  }
}

function summary(events: ComputerEvent[]): string {
  return events
    .map((event) => ('action' in event ? `${event.type} ${event.action.type}` : event.type))
    .join(', ');
}

describe('a client that stops reading its events stream', () => {
  /**
   * GET /events on a raw socket that reads the answer's head and then nothing: what the server
   * sends piles up in the kernel's buffers, and then in the server unless it cuts the stream.
   */
  async function openStalledEvents(id: string) {
    const { port } = new URL(server.url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    await once(socket, 'connect');
    socket.write(
      `GET /computers/${id}/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Authorization: Bearer ${server.key}\r\n\r\n`,
    );
    const head = await new Promise<string>((resolve, reject) => {
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (!text.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        socket.pause();
        resolve(text);
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    return {
      /**
       * Reads again, until the server ends the stream (`cut`) or everything arrived, the
       * command's end included, with the stream still open (not cut).
       */
      readRest: () =>
        new Promise<{ cut: boolean; bytes: number }>((resolve) => {
          let bytes = 0;
          let tail = '';
          const finish = (cut: boolean) => {
            socket.destroy();
            resolve({ cut, bytes });
          };
          socket.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            const text = tail + chunk.toString('latin1');
            // Output is base64 in exec_output events: the only action_response is the command's.
            if (text.includes('"type":"action_response"')) finish(false);
            tail = text.slice(-64);
          });
          socket.once('end', () => finish(true));
          socket.once('error', () => finish(true));
          socket.resume();
        }),
    };
  }

  it('is cut off, and a client that reads still gets every event', async () => {
    const id = await createComputer();
    const reading = await openEvents(id);
    const stalled = await openStalledEvents(id);
    const run = await server.request('POST', `/computers/${id}/exec/sync`, {
      command: PACED_FLOOD.command,
      max_output_length: 100,
    });
    expect(run.status, run.text).toBe(200);
    expect(run.body.exit_code).toBe(0);

    let received = 0;
    await readUntil(reading, (event) => {
      if (event.type === 'exec_output') received += Buffer.from(event.data, 'base64').length;
      return event.type === 'action_response' && event.exit_code !== undefined;
    });
    expect(received).toBe(PACED_FLOOD.bytes);

    const { cut, bytes } = await stalled.readRest();
    expect(
      cut,
      `the stalled client got all ${bytes} bytes, the command's end included: the server buffered everything for it`,
    ).toBe(true);
    expect(bytes).toBeLessThan(PACED_FLOOD.bytes);
    reading.close();
  });
});

describe('batches', () => {
  const headers = () => ({
    authorization: `Bearer ${server.key}`,
    'content-type': 'application/json',
  });

  /** A computer on actions.html with its text field focused, and its events followed. */
  async function typingComputer(): Promise<{ id: string; events: SseReader }> {
    const id = await createComputer();
    const navigated = await server.request('POST', `/computers/${id}/navigate`, {
      url: `${fixtures.url}/actions.html`,
    });
    expect(navigated.body.status, navigated.text).toBe('success');
    await server.request('POST', `/computers/${id}/click`, { x: 500, y: 150 });
    return { id, events: await openEvents(id) };
  }

  /** Sends a batch and closes the request once its wait has started, as a timed-out SDK does. */
  async function closedDuringWait(id: string, events: SseReader, body: unknown): Promise<string> {
    const controller = new AbortController();
    const answer = fetch(`${server.url}/computers/${id}/batch`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => undefined);
    const seen = await readUntil(
      events,
      (event) => event.type === 'action_request' && event.action.type === 'wait',
    );
    controller.abort();
    await answer;
    return (seen.at(-1) as { request_id: string }).request_id;
  }

  it('stops when its request closes: actions not yet started do not run', async () => {
    const { id, events } = await typingComputer();
    const waitId = await closedDuringWait(id, events, {
      actions: [
        { type: 'wait', ms: 4000 },
        { type: 'type', text: 'A' },
      ],
    });
    // Queued behind the batch, so it answers once the batch has stopped (or, before, finished).
    const after = await server.request('POST', `/computers/${id}/type`, { text: 'B' });
    expect(after.body.status, after.text).toBe('success');
    expect((await pageState(server, id)).typed).toBe('B');
    const [waitEnd] = (
      await readUntil(
        events,
        (event) => event.type === 'action_response' && event.request_id === waitId,
      )
    ).slice(-1);
    expect(waitEnd).toMatchObject({ status: 'error' });
    expect((waitEnd as { error_message: string }).error_message).toContain('cut short');
    events.close();
  });

  it('joins a retry of it to the first run, so its actions run once', async () => {
    const { id, events } = await typingComputer();
    const body = {
      actions: [
        { type: 'wait', ms: 1500 },
        { type: 'type', text: 'X' },
      ],
    };
    await closedDuringWait(id, events, body);
    const retry = await server.request('POST', `/computers/${id}/batch`, body, {
      headers: { 'x-stainless-retry-count': '1' },
    });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body).toMatchObject({ success: true, failed_index: null });
    expect(retry.body.results).toHaveLength(2);
    expect((await pageState(server, id)).typed).toBe('X');
    events.close();
  });

  it('answers a retry of a finished batch with its answer, without running it again', async () => {
    const { id, events } = await typingComputer();
    events.close();
    const body = { actions: [{ type: 'type', text: 'Y' }] };
    const first = await server.request('POST', `/computers/${id}/batch`, body);
    expect(first.body.success, first.text).toBe(true);
    const retry = await server.request('POST', `/computers/${id}/batch`, body, {
      headers: { 'x-stainless-retry-count': '1' },
    });
    expect(retry.body).toEqual(first.body);
    expect((await pageState(server, id)).typed).toBe('Y');
    // A request sent again by a person (no retry count) is a new batch.
    await server.request('POST', `/computers/${id}/batch`, body);
    expect((await pageState(server, id)).typed).toBe('YY');
  });
});

describe('stealth and proxy strings that would break a header', () => {
  it('answers 400 naming stealth.user_agent for CR, LF or NUL in it', async () => {
    for (const userAgent of ['Mozilla/5.0\r\nX-Injected: 1', 'Mozilla/5.0\nb', 'Mozilla\u0000']) {
      const response = await server.request('POST', '/computers', {
        stealth: { user_agent: userAgent },
      });
      expect(response.status, response.text).toBe(400);
      expect(response.body).toMatchObject({ code: 'invalid_request', param: 'stealth.user_agent' });
      expect(response.body.message).toContain('stealth.user_agent');
      expect(response.body.message).toContain('line breaks');
    }
  });

  it('answers 400 naming proxy_url for line breaks or encoded control characters', async () => {
    const id = await createComputer();
    for (const proxyUrl of [
      'http://agent%0D%0AX-Injected:%20yes:pw@127.0.0.1:9',
      'http://agent:pw%00@127.0.0.1:9',
      'http://age\r\nnt:pw@127.0.0.1:9',
    ]) {
      const response = await server.request('POST', `/computers/${id}/change-proxy`, {
        proxy_url: proxyUrl,
      });
      expect(response.status, response.text).toBe(400);
      expect(response.body).toMatchObject({ code: 'invalid_request', param: 'proxy_url' });
      expect(response.body.message).toMatch(/control characters/);
    }
    // Refused before anything changed: the computer still browses without a proxy.
    const navigated = await server.request('POST', `/computers/${id}/navigate`, {
      url: `${fixtures.url}/tab.html`,
    });
    expect(navigated.body.status, navigated.text).toBe('success');
  });
});

describe('popups beyond limits.max_tabs', () => {
  it('are closed at once and reported as tab_refused', async () => {
    const id = await createComputer();
    const events = await openEvents(id);
    const counts: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const listed = await server.request('GET', `/computers/${id}/tabs`);
        counts.push((listed.body.result.tabs as unknown[]).length);
      }
    })();
    const popups = 8;
    const navigated = await server.request('POST', `/computers/${id}/navigate`, {
      url: `${fixtures.url}/popups.html?n=${popups}`,
    });
    expect(navigated.body.status, navigated.text).toBe('success');
    const refusals = popups - (MAX_TABS - 1);
    const seen = await readUntil(
      events,
      (_event, all) => all.filter((event) => event.type === 'tab_refused').length === refusals,
    );
    watching = false;
    await watcher;

    const refused = seen.filter((event) => event.type === 'tab_refused');
    for (const event of refused) {
      expect(event).toMatchObject({ max_tabs: MAX_TABS, computer_id: id });
      expect(event.message).toContain('limits.max_tabs');
    }
    const opened = seen.filter((event) => event.type === 'tab' && event.event === 'opened');
    expect(opened).toHaveLength(MAX_TABS - 1);
    const listed = await server.request('GET', `/computers/${id}/tabs`);
    expect(listed.body.result.tabs).toHaveLength(MAX_TABS);
    expect(Math.max(...counts)).toBeLessThanOrEqual(MAX_TABS);
    events.close();
  });

  it('documents tab_refused in /openapi.json', async () => {
    const spec = await server.request('GET', '/openapi.json');
    const schema = spec.body.components.schemas.TabRefusedEvent;
    expect(schema.properties.type).toMatchObject({ const: 'tab_refused' });
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['url', 'max_tabs', 'message']),
    );
  });
});

describe("Chromium's sandbox", () => {
  const NOBODY = 65534;
  const chromium = findChromium(null);

  /** A folder the unprivileged user owns, for its home and data. */
  function nobodyDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'benchtop-nobody-'));
    chownSync(dir, NOBODY, NOBODY);
    return dir;
  }

  /** Chromium's browser process (not a helper) among a process's descendants. */
  function browserProcesses(root: number): number[] {
    return descendants(root).filter((pid) => {
      const command = commandOf(pid);
      return command.includes('--remote-debugging-pipe') && !command.includes('--type=');
    });
  }

  it.skipIf(process.getuid?.() !== 0 || !chromium)(
    'works for an ordinary user with the sandbox on, and is refused to root',
    () => {
      const home = nobodyDir();
      try {
        const args = [
          '--headless',
          '--disable-gpu',
          '--dump-dom',
          'data:text/html,<p>sandboxed</p>',
        ];
        const options = {
          env: { ...process.env, HOME: home },
          encoding: 'utf8',
          timeout: 30_000,
        } as const;
        const asNobody = spawnSync(chromium!, args, { ...options, uid: NOBODY, gid: NOBODY });
        expect(asNobody.status, asNobody.stderr).toBe(0);
        expect(asNobody.stdout).toContain('<p>sandboxed</p>');
        // Why Benchtop run as root passes --no-sandbox: Chromium will not start otherwise.
        const asRoot = spawnSync(chromium!, args, options);
        expect(asRoot.status).not.toBe(0);
        expect(asRoot.stderr).toContain('--no-sandbox');
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it('is off for Benchtop run as root (this server), which passes --no-sandbox', async () => {
    await createComputer();
    const [browser] = browserProcesses(process.pid);
    expect(browser, 'no Chromium found under this process').toBeDefined();
    if (process.getuid?.() === 0) expect(commandOf(browser!)).toContain('--no-sandbox');
  });

  it.skipIf(process.getuid?.() !== 0 || !chromium)(
    'is on for Benchtop run as an ordinary user: no --no-sandbox, renderers in their own namespace',
    async () => {
      const dataDir = nobodyDir();
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith('BENCHTOP_')),
      );
      const child = spawn(
        process.execPath,
        [join(import.meta.dirname, '..', '..', 'bin', 'benchtop.js'), 'serve', '--port', '0'],
        {
          env: {
            ...env,
            HOME: dataDir,
            BENCHTOP_DATA_DIR: dataDir,
            BENCHTOP_BROWSER_WARM_POOL: '0',
            BENCHTOP_DESKTOP_WARM_POOL: '0',
          },
          uid: NOBODY,
          gid: NOBODY,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const output: string[] = [];
      child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      let seen: number[] = [];
      try {
        const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
          let address: string | undefined;
          createInterface({ input: child.stdout! }).on('line', (line) => {
            output.push(line);
            address ??= /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
            const windowKey = /^the window: .*#key=(sk_\S+)$/.exec(line)?.[1];
            if (address && windowKey) resolve({ url: address, key: windowKey });
          });
          child.once('exit', (code) =>
            reject(new Error(`benchtop exited with ${code}: ${output.join('\n')}`)),
          );
        });
        const call = async (method: string, path: string, body?: unknown) => {
          const response = await fetch(`${url}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return { status: response.status, body: (await response.json()) as any };
        };
        const computer = await call('POST', '/computers', {});
        expect(computer.status, JSON.stringify(computer.body)).toBe(200);
        const navigated = await call('POST', `/computers/${computer.body.id}/navigate`, {
          url: `${fixtures.url}/tab.html`,
        });
        expect(navigated.body.status, JSON.stringify(navigated.body)).toBe('success');
        expect(navigated.body.result.title).toBe('Second tab');

        seen = descendants(child.pid!);
        const [browser] = browserProcesses(child.pid!);
        expect(browser, `no Chromium under the server: ${output.join('\n')}`).toBeDefined();
        expect(commandOf(browser!)).not.toContain('--no-sandbox');
        // The namespace sandbox at work: renderers live in a user namespace of their own.
        const userNamespace = (pid: number) => readlinkSync(`/proc/${pid}/ns/user`);
        const renderers = descendants(browser!).filter((pid) =>
          commandOf(pid).includes('--type=renderer'),
        );
        expect(renderers.length).toBeGreaterThan(0);
        for (const renderer of renderers)
          expect(userNamespace(renderer)).not.toBe(userNamespace(browser!));
      } finally {
        seen = [...seen, ...descendants(child.pid!)];
        child.kill('SIGTERM');
        await eventually(() => child.exitCode !== null || child.signalCode !== null, 15_000).catch(
          () => child.kill('SIGKILL'),
        );
        for (const pid of seen.filter(isAlive)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Gone meanwhile.
          }
        }
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
