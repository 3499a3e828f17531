import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { pageState } from '../helpers/page-state.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let fixtures: FixtureServer;
let id: string;

const act = (action: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/computers/${id}/${action}`, body);
const execute = (action: Record<string, unknown>) =>
  server.request('POST', `/computers/${id}/execute`, { action });
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
const events = async () => (await pageState(server, id)).events;

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});
beforeEach(async () => {
  id = (await server.request('POST', '/computers', {})).body.id;
  const navigated = await act('navigate', { url: `${fixtures.url}/actions.html` });
  expect(navigated.body.status).toBe('success');
});
afterEach(async () => {
  await server.request('DELETE', `/computers/${id}`);
});

describe('mouse', () => {
  it('clicks, double-clicks and right-clicks at the given pixel', async () => {
    const click = await act('click', { x: 150, y: 150 });
    expect(click.status).toBe(200);
    expect(click.body).toMatchObject({ status: 'success', result: {} });
    expect(click.body.executed_tab_id).toMatch(/^tab_/);
    expect(click.body.request_id).toMatch(/^req_/);
    expect(click.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await act('double-click', { x: 160, y: 160 });
    await act('right-click', { x: 170, y: 170 });
    const log = await events();
    expect(log).toContain('click 150,150 left detail=1 on target');
    expect(log).toContain('dblclick 160,160 left detail=2 on target');
    expect(log).toContain('contextmenu 170,170 right detail=0 on target');
  });

  it('presses and releases separately, at their own positions', async () => {
    await act('mouse-down', { x: 120, y: 320 });
    await act('mouse-up', { x: 400, y: 420 });
    const log = await events();
    expect(log).toContain('mousedown 120,320 left detail=1 on drag-area');
    expect(log).toContain('mouseup 400,420 left detail=1 on drag-area');
  });

  it('drags with intermediate moves', async () => {
    const drag = await act('drag', { x1: 120, y1: 320, x2: 500, y2: 450 });
    expect(drag.body.status).toBe('success');
    const state = await pageState(server, id);
    expect(state.events).toContain('mousedown 120,320 left detail=1 on drag-area');
    expect(state.events).toContain('mouseup 500,450 left detail=1 on drag-area');
    expect(state.dragMoves).toBeGreaterThan(2);
  });

  it('drags along a path through every point', async () => {
    const path = [
      { x: 110, y: 310 },
      { x: 200, y: 400 },
      { x: 300, y: 320 },
      { x: 350, y: 480 },
    ];
    expect((await execute({ type: 'drag', path })).body.status).toBe('success');
    const state = await pageState(server, id);
    expect(state.events).toContain('mousedown 110,310 left detail=1 on drag-area');
    expect(state.events).toContain('mouseup 350,480 left detail=1 on drag-area');
    expect(state.dragMoves).toBeGreaterThanOrEqual(3);
  });

  it('scrolls by dx and dy pixels', async () => {
    expect((await act('scroll', { x: 300, y: 300, dx: 120, dy: 500 })).body.status).toBe('success');
    await eventually(async () => {
      const { scroll } = await pageState(server, id);
      return scroll[0] === 120 && scroll[1] === 500;
    });
  });

  it('goes back and forward with the side buttons, as a mouse does', async () => {
    await act('navigate', { url: `${fixtures.url}/tab.html` });
    await execute({ type: 'click', x: 100, y: 100, button: 'back' });
    const back = async () => (await act('html')).body.result.title === 'Actions fixture';
    await eventually(back);
    await execute({ type: 'click', x: 100, y: 100, button: 'forward' });
    await eventually(async () => (await act('html')).body.result.title === 'Second tab');
  });

  it('clicks with every button, triple-clicks, and moves', async () => {
    await execute({ type: 'click', x: 150, y: 150, button: 'middle' });
    await execute({ type: 'click', x: 151, y: 151, button: 'wheel' });
    await execute({ type: 'click', x: 154, y: 154, button: 'right' });
    await execute({ type: 'triple_click', x: 155, y: 155 });
    await execute({ type: 'move', x: 30, y: 40 });
    const log = await events();
    expect(log).toContain('auxclick 150,150 middle detail=1 on target');
    expect(log).toContain('auxclick 151,151 middle detail=1 on target');
    expect(log).toContain('contextmenu 154,154 right detail=0 on target');
    expect(log).toContain('mousedown 155,155 left detail=3 on target');
  });
});

describe('keyboard', () => {
  it('types every printable ASCII character, newlines and non-ASCII text exactly', async () => {
    let ascii = '';
    for (let code = 32; code < 127; code++) ascii += String.fromCharCode(code);
    const text = `${ascii}\nsecond line\nÜnïcödé — 日本語 🙂`;
    await act('click', { x: 500, y: 150 });
    expect((await act('type', { text })).body.status).toBe('success');
    expect((await pageState(server, id)).typed).toBe(text);
  });

  it('presses combinations and holds keys across calls', async () => {
    await act('click', { x: 500, y: 150 });
    await act('type', { text: 'hello' });
    await act('hotkey', { keys: ['ctrl+a'] });
    await act('hotkey', { keys: ['Backspace'] });
    expect((await pageState(server, id)).typed).toBe('');

    await act('key-down', { key: 'shift' });
    expect((await pageState(server, id)).held).toEqual(['Shift']);
    await act('hotkey', { keys: ['a'] });
    await act('hotkey', { keys: ['1'] });
    await act('key-up', { key: 'SHIFT' });
    await act('hotkey', { keys: ['b'] });
    await act('hotkey', { keys: ['Shift', 'c'] });
    const state = await pageState(server, id);
    expect(state.typed).toBe('A!bC');
    expect(state.held).toEqual([]);
  });

  it('accepts every documented key name', async () => {
    const names = [
      'shift',
      'ctrl',
      'control',
      'alt',
      'option',
      'meta',
      'cmd',
      'command',
      'super',
      'win',
      'enter',
      'return',
      'escape',
      'esc',
      'tab',
      'backspace',
      'delete',
      'del',
      'space',
      'arrowup',
      'arrowdown',
      'arrowleft',
      'arrowright',
      'up',
      'down',
      'left',
      'right',
      'home',
      'end',
      'pageup',
      'pagedown',
      'pgup',
      'pgdn',
      'insert',
      'capslock',
      'f1',
      'F12',
      'x',
      'Z',
      '/',
    ];
    for (const key of names) {
      const response = await act('hotkey', { keys: [key] });
      expect(response.body.status, key).toBe('success');
    }
    const log = await events();
    expect(log).toContain('keydown ArrowUp code=ArrowUp');
    expect(log).toContain('keydown F12 code=F12');
    expect(log).toContain('keydown Z code=KeyZ');
  });

  it('accepts keypress, key and hotkey actions with point_and_type', async () => {
    await execute({ type: 'point_and_type', x: 500, y: 150, text: 'ab' });
    await execute({ type: 'keypress', keys: ['End'] });
    await execute({ type: 'key', key: 'c' });
    await execute({ type: 'hotkey', keys: ['shift', 'd'] });
    await execute({ type: 'key_down', keys: ['Shift'] });
    await execute({ type: 'key', keys: ['e'] });
    await execute({ type: 'key_up', key: 'shift' });
    expect((await pageState(server, id)).typed).toBe('abcDE');
  });
});

describe('page', () => {
  it('navigates and reports url, title and page context', async () => {
    const response = await act('navigate', { url: `${fixtures.url}/tab.html` });
    expect(response.body.result).toEqual({ url: `${fixtures.url}/tab.html`, title: 'Second tab' });
    expect(response.body.page_context).toMatchObject({
      url: `${fixtures.url}/tab.html`,
      title: 'Second tab',
      is_main_tab: true,
      viewport_width: 1280,
      viewport_height: 720,
      scroll_x: 0,
      scroll_y: 0,
      device_scale_factor: 1,
    });
    expect(response.body.page_context.tab_id).toBe(response.body.executed_tab_id);
  });

  it('says a URL that starts a download is not a page, and the tab stays where it was', async () => {
    await act('navigate', { url: `${fixtures.url}/tab.html` });
    const file = `${fixtures.url}/invoice.csv`;
    const response = await act('navigate', { url: file });
    expect(response.body.status).toBe('error');
    expect(response.body.error_message).toBe(
      `${file} started a download instead of loading a page; the file goes to the computer's downloads and the tab stays where it was`,
    );
    const html = await act('html', {});
    expect(html.body.result).toMatchObject({
      url: `${fixtures.url}/tab.html`,
      title: 'Second tab',
    });
  });

  it('opens an address typed without a scheme on this machine over http', async () => {
    const typed = `${fixtures.url.replace(/^http:\/\//, '')}/tab.html`;
    const response = await act('navigate', { url: typed });
    expect(response.body.status, response.text).toBe('success');
    expect(response.body.result).toEqual({ url: `${fixtures.url}/tab.html`, title: 'Second tab' });
  });

  it('reports a failed navigation as an action error, not an HTTP error', async () => {
    const closed = `http://127.0.0.1:${await closedPort()}/`;
    const response = await act('navigate', { url: closed });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('error');
    expect(response.body.error_message).toBe(`net::ERR_CONNECTION_REFUSED at ${closed}`);
    // The tab is usable at once: the next navigation is not cut short by the error page.
    const next = await act('navigate', { url: `${fixtures.url}/tab.html` });
    expect(next.body.status, next.text).toBe('success');
    expect(next.body.result).toEqual({ url: `${fixtures.url}/tab.html`, title: 'Second tab' });
  });

  it('shows on the screen what failed to load, where the headless shell shows a blank page', async () => {
    const port = await closedPort();
    const closed = `http://127.0.0.1:${port}/`;
    expect((await act('navigate', { url: closed })).body.status).toBe('error');
    const failed = await act('html', {});
    expect(failed.body.result).toMatchObject({ title: `127.0.0.1:${port}` });
    const text = (failed.body.result.html_content as string).replace(/<[^>]+>/g, ' ');
    expect(text).toContain('This site can’t be reached');
    expect(text).toContain(closed);
    expect(text).toContain('net::ERR_CONNECTION_REFUSED');
    // What a person or a model looking at the screen gets: dark text on it, not a white page.
    const shot = await act('screenshot', { base64: true });
    const { data } = await sharp(Buffer.from(shot.body.result.base64 as string, 'base64'))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(data.filter((value) => value < 128).length).toBeGreaterThan(500);

    await act('navigate', { url: `${fixtures.url}/actions.html` });
  });

  it('includes page_context when asked', async () => {
    await act('scroll', { x: 300, y: 300, dx: 0, dy: 250 });
    await eventually(async () => (await pageState(server, id)).scroll[1] === 250);
    const response = await act('click', { x: 10, y: 10, include_context: true });
    expect(response.body.page_context).toMatchObject({
      page_width: 3000,
      page_height: 3000,
      scroll_y: 250,
    });
    expect((await act('click', { x: 10, y: 10 })).body.page_context).toBeUndefined();
  });

  it('returns the html, url and title', async () => {
    const response = await act('html', { auto_detect_encoding: true });
    expect(response.body.result.url).toBe(`${fixtures.url}/actions.html`);
    expect(response.body.result.title).toBe('Actions fixture');
    expect(response.body.result.html_content).toMatch(/^<!DOCTYPE html><html lang="en">/);
    expect(response.body.result.html_content).toContain('<div id="target">target</div>');
  });

  it('takes screenshots fetchable without a key, and as base64', async () => {
    const shot = await act('screenshot', {});
    expect(shot.body.result).toMatchObject({ width: 1280, height: 720 });
    const url: string = shot.body.result.screenshot_url;
    expect(url.startsWith(`${server.url}/screenshots/`)).toBe(true);
    const image = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(image.subarray(1, 4).toString()).toBe('PNG');
    expect([image.readUInt32BE(16), image.readUInt32BE(20)]).toEqual([1280, 720]);

    const inline = await act('screenshot', { base64: true });
    const png = Buffer.from(inline.body.result.base64, 'base64');
    expect(inline.body.result.screenshot_url).toBe(
      `data:image/png;base64,${inline.body.result.base64}`,
    );
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 720]);
  });

  it('resizes the viewport, and screenshots follow', async () => {
    const resized = await act('viewport', { width: 1024, height: 600 });
    expect(resized.body.result).toEqual({ width: 1024, height: 600, scale_factor: 1 });
    const shot = await act('screenshot', {});
    expect(shot.body.result).toMatchObject({ width: 1024, height: 600 });
    const context = (await act('click', { x: 1, y: 1, include_context: true })).body.page_context;
    expect([context.viewport_width, context.viewport_height]).toEqual([1024, 600]);
    const scale = await act('viewport', { width: 1024, height: 600, scale_factor: 2 });
    expect(scale.status).toBe(400);
    expect(scale.body.param).toBe('scale_factor');
  });

  it("takes a high-density computer's screenshot in CSS pixels, where the page is scrolled", async () => {
    const dense = await server.request('POST', '/computers', {
      display: { width: 800, height: 600, scale: 2 },
    });
    const path = `/computers/${dense.body.id}`;
    try {
      const at = async (band: string) => {
        await server.request('POST', `${path}/navigate`, {
          url: `${fixtures.url}/stripes.html#${band}`,
        });
        const shot = await server.request('POST', `${path}/screenshot`, { base64: true });
        const png = Buffer.from(shot.body.result.base64, 'base64');
        const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
        const middle =
          (info.height / 2) * info.width * info.channels + (info.width / 2) * info.channels;
        return { size: [info.width, info.height], rgb: [...data.subarray(middle, middle + 3)] };
      };
      expect(await at('red')).toEqual({ size: [800, 600], rgb: [220, 0, 0] });
      expect(await at('green')).toEqual({ size: [800, 600], rgb: [0, 200, 0] });
      expect(await at('blue')).toEqual({ size: [800, 600], rgb: [0, 0, 220] });
    } finally {
      await server.request('DELETE', path);
    }
  });

  it('waits, capped at 55 s', async () => {
    const started = Date.now();
    expect((await execute({ type: 'wait', ms: 300 })).body.status).toBe('success');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await execute({ type: 'wait', ms: 60_000 })).status).toBe(400);
  });

  it('accepts go_to_url, navigate, get_html_content, screenshot and set_viewport through /execute', async () => {
    const go = await execute({ type: 'go_to_url', url: `${fixtures.url}/tab.html` });
    expect(go.body.result.title).toBe('Second tab');
    const nav = await server.request('POST', `/computers/${id}/execute`, {
      type: 'navigate',
      url: `${fixtures.url}/actions.html`,
    });
    expect(nav.body.result.title).toBe('Actions fixture');
    expect((await execute({ type: 'get_html_content' })).body.result.title).toBe('Actions fixture');
    expect((await execute({ type: 'screenshot' })).body.result.width).toBe(1280);
    expect(
      (await execute({ type: 'set_viewport', width: 800, height: 600 })).body.result.width,
    ).toBe(800);
  });

  it('scrolls with scroll_x / scroll_y and hscroll', async () => {
    await execute({ type: 'scroll', x: 300, y: 300, scroll_x: 0, scroll_y: 400 });
    await eventually(async () => (await pageState(server, id)).scroll[1] === 400);
    await execute({ type: 'hscroll', x: 300, y: 300, dx: 200 });
    await eventually(async () => (await pageState(server, id)).scroll.join() === '200,400');
  });

  it('runs a shell command with debug', async () => {
    const response = await act('debug', { command: 'echo out; echo err >&2; exit 3' });
    expect(response.body.result).toEqual({
      debug_response: 'out\nerr\n',
      stdout: 'out\n',
      stderr: 'err\n',
      exit_code: 3,
    });
  });
});
