import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  differingPixels,
  displayOf,
  processClock,
  processesOnDisplay,
  readWorkspaceFile,
  screenPixels,
  settledPixels,
  startCat,
  typeInTerminal,
  waitForFile,
} from '../helpers/desktop.js';
import { commandOf, descendants, isAlive } from '../helpers/processes.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
const created: string[] = [];

const create = async (body: Record<string, unknown> = {}) => {
  const response = await server.request('POST', '/computers', { kind: 'desktop', ...body });
  expect(response.status, response.text).toBe(200);
  created.push(response.body.id as string);
  return response.body.id as string;
};
const act = (id: string, action: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/computers/${id}/${action}`, body);
/** Runs a command on the desktop (DISPLAY set) and returns its stdout. */
const shell = async (id: string, command: string) =>
  ((await act(id, 'debug', { command })).body.result.stdout as string).trim();

beforeAll(async () => {
  server = await startTestServer({ browser: { warm_pool: 0 }, limits: { desktops_per_org: 3 } });
});
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => server.request('DELETE', `/computers/${id}`)));
});
afterAll(async () => {
  await server?.close();
});

describe('desktop computers', () => {
  it('are isolated from each other and leave nothing running after delete', async () => {
    const [one, two] = await Promise.all([create(), create()]);
    expect(displayOf(server, one)).not.toBe(displayOf(server, two));
    const before = await settledPixels(server, two);

    await typeInTerminal(server, one, 'echo only-one > marker.txt\n');
    // The terminal's shell writes it once the typed line reaches it: slow on a loaded machine.
    await waitForFile(server, one, 'marker.txt', (text) => text === 'only-one\n');
    expect(await readWorkspaceFile(server, two, 'marker.txt')).toBeUndefined();
    expect(differingPixels(before, await screenPixels(server, two))).toBe(0);

    const displays = [displayOf(server, one), displayOf(server, two)];
    const running = await Promise.all(displays.map((display) => processesOnDisplay(display)));
    expect(running.every((pids) => pids.length >= 3)).toBe(true);
    // Their sandboxes (where bubblewrap runs): bwrap and its init, in a session of its own.
    const sandboxes = descendants(process.pid).filter((pid) => commandOf(pid).startsWith('bwrap'));
    const deleting = await processClock();
    await Promise.all([one, two].map((id) => server.request('DELETE', `/computers/${id}`)));
    for (const display of displays)
      expect(await processesOnDisplay(display, { startedBefore: deleting })).toEqual([]);
    expect(sandboxes.filter(isAlive)).toEqual([]);
  });

  it('types every printable ASCII character, newlines and non-ASCII text exactly', async () => {
    const id = await create();
    let ascii = '';
    for (let code = 32; code < 127; code++) ascii += String.fromCharCode(code);
    const text = `${ascii}\nÜnïcödé — 日本語 ÉÀ\nlast line\n`;
    await startCat(server, id, 'typed.txt');
    const typed = await act(id, 'type', { text });
    expect(typed.body.status, typed.text).toBe('success');
    await act(id, 'hotkey', { keys: ['ctrl+d'] });
    // cat writes the file when it gets ctrl+d; then the whole text must be there, exactly.
    await waitForFile(server, id, 'typed.txt', (text) => !!text?.endsWith('last line\n'));
    expect(await readWorkspaceFile(server, id, 'typed.txt')).toBe(text);
    await server.request('DELETE', `/computers/${id}`);
  });

  it('types into the window a click focused, even when the window manager is slow to take the click', async () => {
    const id = await create();
    // A second terminal opens over the first and takes the focus.
    await typeInTerminal(
      server,
      id,
      `xterm -T second -geometry 30x5+500+350 -e sh -c 'cat > second.txt' &\n`,
    );
    await eventually(
      async () => (await shell(id, 'xdotool getwindowfocus getwindowname')) === 'second',
    );
    // The window manager is held still while the first terminal is clicked: the X server keeps
    // the click frozen for it, and typing sent before it has focused the terminal goes to `second`.
    const running = await processesOnDisplay(displayOf(server, id));
    const windowManager = running.find((pid) => commandOf(pid).startsWith('openbox'))!;
    process.kill(windowManager, 'SIGSTOP');
    let resumed = false;
    const resume = setTimeout(() => {
      resumed = true;
      process.kill(windowManager, 'SIGCONT');
    }, 500);
    try {
      const clicked = act(id, 'click', { x: 200, y: 150 });
      expect((await clicked).body.status).toBe('success');
      expect(resumed).toBe(true);
      expect((await act(id, 'type', { text: 'echo first > first.txt\n' })).body.status).toBe(
        'success',
      );
    } finally {
      clearTimeout(resume);
      if (!resumed) process.kill(windowManager, 'SIGCONT');
    }
    await waitForFile(server, id, 'first.txt', (text) => text === 'first\n');
    expect(await readWorkspaceFile(server, id, 'second.txt')).toBe('');
  });

  it('holds keys across calls and presses shifted symbols', async () => {
    const id = await create();
    await startCat(server, id, 'keys.txt');
    await act(id, 'key-down', { key: 'shift' });
    await act(id, 'hotkey', { keys: ['a'] });
    await act(id, 'key-up', { key: 'shift' });
    await act(id, 'hotkey', { keys: ['b'] });
    await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'keypress', keys: ['!'] },
    });
    await act(id, 'hotkey', { keys: ['shift+c'] });
    await act(id, 'hotkey', { keys: ['enter'] });
    await act(id, 'hotkey', { keys: ['ctrl', 'd'] });
    await waitForFile(server, id, 'keys.txt', (text) => text === 'Ab!C\n');
    await server.request('DELETE', `/computers/${id}`);
  });

  it('moves, clicks, drags and scrolls the pointer, and screenshots the whole screen', async () => {
    const id = await create({ display: { width: 1024, height: 600 } });
    const shot = await act(id, 'screenshot');
    expect(shot.body.result).toMatchObject({ width: 1024, height: 600 });
    const png = Buffer.from(await (await fetch(shot.body.result.screenshot_url)).arrayBuffer());
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 600]);

    const where = async () =>
      shell(id, 'xdotool getmouselocation --shell | head -2 | tr "\\n" " "');
    await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'move', x: 321, y: 123 },
    });
    expect(await where()).toBe('X=321 Y=123');
    expect((await act(id, 'click', { x: 400, y: 300 })).body.status).toBe('success');
    expect(await where()).toBe('X=400 Y=300');
    expect((await act(id, 'drag', { x1: 100, y1: 100, x2: 500, y2: 400 })).body.status).toBe(
      'success',
    );
    expect(await where()).toBe('X=500 Y=400');
    expect((await act(id, 'scroll', { x: 50, y: 60, dx: 0, dy: 300 })).body.status).toBe('success');
    expect(await where()).toBe('X=50 Y=60');
    expect((await act(id, 'double-click', { x: 10, y: 10 })).body.status).toBe('success');
    expect((await act(id, 'right-click', { x: 700, y: 500 })).body.status).toBe('success');
    await act(id, 'mouse-down', { x: 30, y: 40 });
    await act(id, 'mouse-up', { x: 60, y: 70 });
    expect(await where()).toBe('X=60 Y=70');
    await server.request('DELETE', `/computers/${id}`);
  });

  it('answers change-proxy, html before any page and resizing with 400, and opens navigate in a browser on the display', async () => {
    const id = await create();
    for (const [method, path, body] of [
      ['POST', 'html', {}],
      ['POST', 'change-proxy', { proxy_url: '' }],
    ] as const) {
      const response = await server.request(method, `/computers/${id}/${path}`, body);
      expect(response.status, path).toBe(400);
      expect(response.body.message).toContain('desktop');
    }
    const resize = await act(id, 'viewport', { width: 800, height: 600 });
    expect(resize.status).toBe(400);
    expect(resize.body.message).toContain('Xvfb cannot change its size');
    expect((await act(id, 'viewport', { width: 1280, height: 720 })).body.status).toBe('success');

    const navigated = await act(id, 'navigate', { url: 'about:blank' });
    expect(navigated.body.status).toBe('success');
    const display = displayOf(server, id);
    await eventually(async () => {
      const pids = await processesOnDisplay(display);
      const { readFile } = await import('node:fs/promises');
      const commands = await Promise.all(
        pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')),
      );
      return commands.some((command) => command.includes('chromium'));
    }, 10_000);
    const deleting = await processClock();
    await server.request('DELETE', `/computers/${id}`);
    expect(await processesOnDisplay(display, { startedBefore: deleting })).toEqual([]);
  });

  it('ends with reason crashed when its X server dies, and others keep working', async () => {
    const [victim, other] = await Promise.all([create(), create()]);
    // The real X server process dies, as it would if it crashed.
    const operator = server.core.computers.get('local', victim).operator as unknown as {
      options: { display: { pid: number } };
    };
    process.kill(operator.options.display.pid, 'SIGKILL');
    await eventually(async () => {
      const computer = (await server.request('GET', `/computers/${victim}`)).body;
      return computer.status === 'terminated' && computer.termination_reason === 'crashed';
    });
    expect((await act(other, 'screenshot')).body.status).toBe('success');
    await server.request('DELETE', `/computers/${other}`);
  });

  it('says what to install when Xvfb is missing, and keeps serving browsers', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const response = await server.request('POST', '/computers', { kind: 'desktop' });
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ code: 'unavailable' });
      expect(response.body.message).toContain('apt-get install xvfb');
    } finally {
      process.env.PATH = path;
    }
    const browser = await server.request('POST', '/computers', {});
    expect(browser.status).toBe(200);
    await server.request('DELETE', `/computers/${browser.body.id as string}`);
  });
});

describe('desktop batches and bad input', () => {
  it('runs batches and /execute with desktop actions, wait included', async () => {
    const id = await create();
    await startCat(server, id, 'batch.txt');
    const batch = await server.request('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'type', text: 'one' },
        { type: 'wait', ms: 50 },
        { type: 'keypress', keys: ['space'] },
        { type: 'point_and_type', x: 200, y: 150, text: 'two' },
        { type: 'key', key: 'enter' },
        { type: 'hotkey', keys: ['ctrl', 'd'] },
        { type: 'screenshot' },
      ],
    });
    expect(batch.body).toMatchObject({ success: true, failed_index: null });
    expect(batch.body.results.at(-1).result).toMatchObject({ width: 1280, height: 720 });
    await waitForFile(server, id, 'batch.txt', (text) => text === 'one two\n');
    const stopped = await server.request('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'move', x: 5, y: 5 },
        { type: 'get_html_content' },
        { type: 'move', x: 6, y: 6 },
      ],
    });
    expect(stopped.body).toMatchObject({ success: false, failed_index: 1 });
    expect(stopped.body.error_message).toContain('desktop');
  });

  it.each([
    [{ kind: 'desktop', display: { width: 800, height: 600, scale: 2 } }, 'display.scale'],
    [{ kind: 'browser', host_display: true }, 'host_display'],
    [{ kind: 'desktop', host_display: 'yes' }, 'host_display'],
    [{ kind: 'desktop', display: { width: 10, height: 600 } }, 'display.width'],
  ])('refuses %j naming %s', async (body, param) => {
    const response = await server.request('POST', '/computers', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_request', param });
  });
});

describe('host mode', () => {
  it('drives the real screen only when enabled, one computer at a time, and never ends the session', async () => {
    // This machine's "real screen" for the test: an X server Benchtop did not start.
    const { spawn } = await import('node:child_process');
    const xvfb = spawn(
      'Xvfb',
      ['-displayfd', '1', '-screen', '0', '1024x768x24', '-nolisten', 'tcp'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const number = await new Promise<string>((resolve) =>
      xvfb.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
    );
    const previous = process.env.DISPLAY;
    process.env.DISPLAY = `:${number}`;
    const host = await startTestServer({ browser: { warm_pool: 0 }, desktop: { host_mode: true } });
    try {
      const off = await server.request('POST', '/computers', {
        kind: 'desktop',
        host_display: true,
      });
      expect(off.status).toBe(400);
      expect(off.body).toMatchObject({ param: 'host_display' });
      expect(off.body.message).toContain('desktop.host_mode');

      const first = await host.request('POST', '/computers', {
        kind: 'desktop',
        host_display: true,
      });
      expect(first.status, first.text).toBe(200);
      expect(first.body.display).toEqual({ width: 1024, height: 768, scale: 1 });
      const second = await host.request('POST', '/computers', {
        kind: 'desktop',
        host_display: true,
      });
      expect(second.status).toBe(400);
      expect(second.body.message).toContain(first.body.id);

      const shot = await host.request('POST', `/computers/${first.body.id}/screenshot`, {});
      expect(shot.body.result).toMatchObject({ width: 1024, height: 768 });
      await host.request('POST', `/computers/${first.body.id}/execute`, {
        action: { type: 'move', x: 77, y: 88 },
      });
      const where = await host.request('POST', `/computers/${first.body.id}/debug`, {
        command: 'xdotool getmouselocation --shell | head -2 | tr "\\n" " "',
      });
      expect(where.body.result.stdout.trim()).toBe('X=77 Y=88');

      await host.request('DELETE', `/computers/${first.body.id}`);
      expect(xvfb.exitCode).toBeNull();
      const again = await host.request('POST', '/computers', {
        kind: 'desktop',
        host_display: true,
      });
      expect(again.status).toBe(200);
      await host.request('DELETE', `/computers/${again.body.id}`);
    } finally {
      process.env.DISPLAY = previous;
      await host.close();
      xvfb.kill('SIGKILL');
    }
  });
});
