import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { displayOf, processClock, processesOnDisplay, workspaceOf } from '../helpers/desktop.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { visitLoginPage } from '../helpers/page-state.js';
import { SseReader } from '../helpers/sse.js';
import { screenshotPath } from '../helpers/ui-browser.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let fixtures: FixtureServer;
const created: string[] = [];

/** Product pages as in the SDK's multi-tab example, each filling the window with its color. */
const PRODUCTS = {
  a: { name: 'Product A', price: 19, color: 'dd2222' },
  b: { name: 'Product B', price: 15, color: '22aa22' },
  c: { name: 'Product C', price: 24, color: '2222dd' },
} as const;
type ProductKey = keyof typeof PRODUCTS;
type Tab = { tab_id: string; id: string; url: string; title: string; is_main: boolean };
const productUrl = (key: ProductKey) => {
  const { name, price, color } = PRODUCTS[key];
  return `${fixtures.url}/product.html?${new URLSearchParams({ name, price: String(price), color })}`;
};

const create = async () => {
  const response = await server.request('POST', '/computers', { kind: 'desktop' });
  expect(response.status, response.text).toBe(200);
  created.push(response.body.id as string);
  return response.body.id as string;
};
const post = (id: string, path: string, body?: unknown) =>
  server.request('POST', `/computers/${id}/${path}`, body);
/** What the Python SDK sends for computer.navigate(url) and client.computers.tabs.create(id, url=). */
const navigate = (id: string, key: string) =>
  post(id, 'navigate', { url: key in PRODUCTS ? productUrl(key as ProductKey) : key });
const newTab = (id: string, key: ProductKey) => post(id, 'tabs', { url: productUrl(key) });
const listTabs = async (id: string) => {
  const response = await server.request('GET', `/computers/${id}/tabs`);
  expect(response.status, response.text).toBe(200);
  return response.body.result.tabs as Tab[];
};
/** computer.wait(seconds) */
const wait = (id: string, seconds: number) =>
  post(id, 'execute', { action: { type: 'wait', ms: seconds * 1000 } });

/** The screen as the examples get it: screenshot, then its URL fetched without a key. */
async function screenshot(id: string): Promise<Buffer> {
  const shot = await post(id, 'screenshot', { base64: false });
  expect(shot.body.status, shot.text).toBe('success');
  return Buffer.from(await (await fetch(shot.body.result.screenshot_url as string)).arrayBuffer());
}

/** Whether the page area of the screen shows this product's color (a spot clear of its text). */
async function showsProduct(id: string, key: ProductKey, saveTo?: string): Promise<boolean> {
  const png = await screenshot(id);
  if (saveTo) await writeFile(saveTo, png);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const offset = (650 * info.width + 100) * 3;
  const want = Buffer.from(PRODUCTS[key].color, 'hex');
  return [0, 1, 2].every((channel) => Math.abs(data[offset + channel]! - want[channel]!) <= 8);
}

/** The desktop's browser opens a CSV: the file is kept, listed and served, byte for byte. */
async function downloadsInvoice(id: string): Promise<void> {
  const answer = await post(id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
  expect(answer.body.error_message).toContain(
    "started a download instead of loading a page; the file goes to the computer's downloads",
  );
  const [saved] = await eventually(async () => {
    const listed = await server.request('GET', `/computers/${id}/downloads`);
    return listed.body.data.length > 0 && listed.body.data;
  });
  const invoice = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv'));
  expect(saved).toMatchObject({ name: 'invoice.csv', size_bytes: invoice.length });
  const served = await server.request('GET', `/computers/${id}/downloads/invoice.csv`);
  expect(Buffer.from(served.text)).toEqual(invoice);
}

/** Main processes of Chromium on a display (not its renderers, GPU or crash handler). */
async function browsersOn(display: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await processesOnDisplay(display)) {
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (/(^|\/)(chromium|chrome)$/.test(argv[0]!) && !argv.some((a) => a.startsWith('--type=')))
      found.push(pid);
  }
  return found;
}

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ browser: { warm_pool: 0 }, limits: { desktops_per_org: 3 } });
});
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => server.request('DELETE', `/computers/${id}`)));
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

describe('the browser of a desktop computer', () => {
  it('runs the multi-tab example: navigate, then tabs.create puts each new page on the screen', async () => {
    const id = await create();
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);

    const first = await navigate(id, 'a');
    expect(first.body.status, first.text).toBe('success');
    expect(first.body.result).toEqual({ url: productUrl('a'), title: 'Product A' });
    expect(first.body.page_context).toMatchObject({ url: productUrl('a'), is_main_tab: true });
    await wait(id, 3);
    expect(await showsProduct(id, 'a')).toBe(true);

    const opened: string[] = [first.body.executed_tab_id as string];
    for (const key of ['b', 'c'] as const) {
      const tab = await newTab(id, key);
      expect(tab.status, tab.text).toBe(200);
      expect(tab.body.status).toBe('success');
      const tabId = tab.body.result.created_tab_id as string;
      expect(tab.body.executed_tab_id).toBe(tabId);
      expect(tab.body.page_context).toMatchObject({ tab_id: tabId, url: productUrl(key) });
      opened.push(tabId);
      await wait(id, 3);
      // Kept for a person to look at: the screen right after the last tabs.create.
      expect(await showsProduct(id, key, screenshotPath('desktop-browser-tabs.png'))).toBe(true);
    }

    expect(await listTabs(id)).toEqual([
      {
        tab_id: opened[0],
        id: opened[0],
        url: productUrl('a'),
        title: 'Product A',
        is_main: false,
      },
      {
        tab_id: opened[1],
        id: opened[1],
        url: productUrl('b'),
        title: 'Product B',
        is_main: false,
      },
      { tab_id: opened[2], id: opened[2], url: productUrl('c'), title: 'Product C', is_main: true },
    ]);
    const html = await post(id, 'html', { auto_detect_encoding: false });
    expect(html.body.result).toMatchObject({ url: productUrl('c'), title: 'Product C' });
    expect(html.body.result.html_content).toContain('<title>Product C</title>');

    // The events stream tells of each tab and of each page loaded, as for browser computers.
    const seen: Array<Record<string, unknown>> = [];
    await eventually(async () => {
      for (const event of await events.collect(200))
        seen.push(event.data as Record<string, unknown>);
      const loaded = seen.filter((event) => event.type === 'navigation').map((e) => e.tab_id);
      return opened.every((tab) => loaded.includes(tab));
    }, 10_000);
    events.close();
    const tabEvents = seen.filter((event) => event.type === 'tab' && event.event === 'opened');
    expect(tabEvents.map((event) => event.tab_id)).toEqual(opened);
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'navigation', tab_id: opened[2], url: productUrl('c') }),
    );
  });

  it('reuses one Chromium: navigate loads in the current tab; switch and close change the screen', async () => {
    const id = await create();
    const display = displayOf(server, id);
    expect((await navigate(id, 'a')).body.status).toBe('success');
    const [browser] = await browsersOn(display);
    expect(browser).toBeDefined();
    const [first] = await listTabs(id);

    const second = await navigate(id, 'b');
    expect(second.body.result).toEqual({ url: productUrl('b'), title: 'Product B' });
    expect(second.body.executed_tab_id).toBe(first!.tab_id);
    expect(await listTabs(id)).toEqual([expect.objectContaining({ url: productUrl('b') })]);
    expect(await browsersOn(display)).toEqual([browser]);
    // The profile lives in the workspace, which a persistent desktop saves.
    expect(existsSync(join(workspaceOf(server, id), '.browser', 'Default'))).toBe(true);

    const third = (await newTab(id, 'c')).body.result.created_tab_id as string;
    const switched = await post(id, `tabs/${first!.tab_id}/switch`);
    expect(switched.body.result).toEqual({ active_tab: first!.tab_id });
    expect(switched.body.page_context).toMatchObject({ url: productUrl('b'), is_main_tab: true });
    await eventually(() => showsProduct(id, 'b'));
    const html = await post(id, 'html', { auto_detect_encoding: false });
    expect(html.body.result).toMatchObject({ url: productUrl('b'), title: 'Product B' });

    const closed = await server.request('DELETE', `/computers/${id}/tabs/${first!.tab_id}`);
    expect(closed.body.result).toEqual({ closed_tab: first!.tab_id });
    expect(closed.body.executed_tab_id).toBe(third);
    await eventually(() => showsProduct(id, 'c'));
    expect(await listTabs(id)).toEqual([expect.objectContaining({ tab_id: third, is_main: true })]);

    const last = await server.request('DELETE', `/computers/${id}/tabs/${third}`);
    expect(last.status).toBe(400);
    expect(last.body.message).toContain('last tab');
    for (const [method, path] of [
      ['POST', `tabs/${first!.tab_id}/switch`],
      ['DELETE', `tabs/${first!.tab_id}`],
    ] as const) {
      const unknown = await server.request(method, `/computers/${id}/${path}`);
      expect(unknown.status, path).toBe(404);
      expect(unknown.body.message).toContain(first!.tab_id);
    }
    expect(await browsersOn(display)).toEqual([browser]);
  });

  it('runs the QA example: navigate, wait, screenshot, then the html of the page and exec/sync', async () => {
    const id = await create();
    const url = `${fixtures.url}/actions.html`;
    expect((await navigate(id, url)).body.result).toEqual({ url, title: 'Actions fixture' });
    await wait(id, 1);
    expect((await screenshot(id)).length).toBeGreaterThan(0);
    const html = await post(id, 'html', { auto_detect_encoding: false });
    expect(html.status, html.text).toBe(200);
    expect(html.body.result).toMatchObject({ url, title: 'Actions fixture' });
    expect(html.body.result.html_content).toMatch(/^<!DOCTYPE html><html/i);
    expect(html.body.result.html_content).toContain('id="popup-link"');
    const exec = await post(id, 'exec/sync', {
      command: 'xdotool key F12 2>/dev/null; sleep 0.5; echo done',
      timeout_seconds: 5,
    });
    expect(exec.body).toMatchObject({ stdout: 'done\n', exit_code: 0 });
    // DevTools opened by F12 is no tab.
    expect((await listTabs(id)).map((tab) => tab.url)).toEqual([url]);
  });

  it('before any page is opened: no tabs, html says what to do, unknown tabs are 404, no downloads', async () => {
    const id = await create();
    const tabs = await server.request('GET', `/computers/${id}/tabs`);
    expect(tabs.status).toBe(200);
    expect(tabs.body).toMatchObject({ status: 'success', result: { tabs: [] } });
    expect(tabs.body.page_context).toBeUndefined();

    const html = await post(id, 'html', { auto_detect_encoding: false });
    expect(html.status).toBe(400);
    expect(html.body.code).toBe('invalid_request');
    expect(html.body.message).toContain('navigate');
    expect(html.body.message).toContain('/tabs');
    for (const [method, path] of [
      ['POST', 'tabs/tab_nope/switch'],
      ['DELETE', 'tabs/tab_nope'],
    ] as const) {
      const response = await server.request(method, `/computers/${id}/${path}`);
      expect(response.status, path).toBe(404);
    }
    const proxy = await post(id, 'change-proxy', { proxy_url: '' });
    expect(proxy.status).toBe(400);
    expect(proxy.body.message).toContain('browser computer');
    expect((await server.request('GET', `/computers/${id}/downloads`)).body).toEqual({ data: [] });
    expect(await browsersOn(displayOf(server, id))).toEqual([]);
  });

  it('starts again after its window is closed or it is killed, and the desktop stays', async () => {
    const id = await create();
    const display = displayOf(server, id);
    expect((await navigate(id, 'a')).body.status).toBe('success');
    // A person closes the window (its keyboard shortcut, on the focused Chromium).
    await post(id, 'click', { x: 640, y: 400 });
    await post(id, 'hotkey', { keys: ['ctrl', 'shift', 'w'] });
    // Chromium exits, and its tabs go with it.
    await eventually(
      async () => (await browsersOn(display)).length === 0 && (await listTabs(id)).length === 0,
      10_000,
    );
    expect((await post(id, 'html', {})).status).toBe(400);

    const again = await navigate(id, 'b');
    expect(again.body.result, again.text).toEqual({ url: productUrl('b'), title: 'Product B' });
    expect(await listTabs(id)).toEqual([expect.objectContaining({ url: productUrl('b') })]);
    await eventually(() => showsProduct(id, 'b'));

    // Chromium crashes.
    for (const pid of await browsersOn(display)) process.kill(pid, 'SIGKILL');
    await eventually(async () => (await browsersOn(display)).length === 0, 10_000);
    const afterCrash = await newTab(id, 'c');
    expect(afterCrash.body.status, afterCrash.text).toBe('success');
    expect(await listTabs(id)).toEqual([expect.objectContaining({ url: productUrl('c') })]);
    await eventually(() => showsProduct(id, 'c'));
    expect((await server.request('GET', `/computers/${id}`)).body.status).toBe('running');
  });

  it('keeps what its browser downloads, listed and served as a browser computer does', async () => {
    const id = await create();
    await downloadsInvoice(id);
    // Kept outside the sandbox: nothing of it is left in the browser's /tmp.
    const left = await post(id, 'exec/sync', {
      command: 'ls -d /tmp/benchtop-downloads-*/ && find /tmp/benchtop-downloads-* -type f',
    });
    expect(left.body).toMatchObject({
      stdout: expect.stringMatching(/^\/tmp\/benchtop-downloads-[0-9a-f]{12}\/\n$/),
      exit_code: 0,
    });
  });

  it('keeps what its browser downloads when the desktop runs on the host, unsandboxed', async () => {
    const patched = await server.request('PATCH', '/settings', { exec: { sandbox_owner: false } });
    expect(patched.status, patched.text).toBe(200);
    try {
      const id = await create();
      // On the host: its commands see Benchtop's data dir, which a sandbox hides.
      const onHost = await post(id, 'exec/sync', {
        command: `test -d ${server.dataDir} && echo host`,
      });
      expect(onHost.body.stdout).toBe('host\n');
      await downloadsInvoice(id);
    } finally {
      await server.request('PATCH', '/settings', { exec: { sandbox_owner: null } });
    }
  });

  it("keeps a persistent desktop's browser profile: cookies and storage come back", async () => {
    const call = (method: string, path: string, body?: unknown) =>
      server.request(method, path, body);
    const first = await server.request('POST', '/computers', { kind: 'desktop', persistent: true });
    const id = first.body.id as string;
    const signedIn = await visitLoginPage(call, fixtures.url, id, '?login&mark=alice');
    expect(signedIn).toMatchObject({ cookie: 'alice', local: 'alice', idb: 'alice' });
    expect((await server.request('DELETE', `/computers/${id}`)).status).toBe(204);

    const restored = await server.request('POST', '/computers', {
      kind: 'desktop',
      environment_id: id,
    });
    expect(restored.status, restored.text).toBe(200);
    created.push(restored.body.id as string);
    const found = await visitLoginPage(call, fixtures.url, restored.body.id as string);
    expect(found).toMatchObject({ cookie: 'alice', local: 'alice', idb: 'alice' });
  });

  it('takes a click and typing at once after a navigate: the page on the screen is the one loaded', async () => {
    // A page can fire load before it draws; until it draws, Chromium drops input to it. Without
    // the wait for the page's frames 11 clicks in 60 were lost; with it about one in 550 still is
    // (a cause in Chromium not found), so one lost click in 40 is allowed and two fail the test.
    const id = await create();
    const url = `${fixtures.url}/field.html`;
    const lost: number[] = [];
    for (let n = 1; n <= 40; n++) {
      expect((await navigate(id, url)).body.status).toBe('success');
      expect((await post(id, 'click', { x: 640, y: 400 })).body.status).toBe('success');
      expect((await post(id, 'type', { text: `try ${n}` })).body.status).toBe('success');
      const title = () => post(id, 'html', {}).then((html) => html.body.result.title as string);
      const typed = await eventually(async () => (await title()) === `try ${n}`, 5_000).then(
        () => true,
        () => false,
      );
      if (!typed) lost.push(n);
    }
    expect(
      lost.length,
      `navigates whose click and typing were lost: ${lost.join(', ')}`,
    ).toBeLessThanOrEqual(1);
  }, 120_000);

  it('types characters outside the keyboard map into its page exactly, each first one included', async () => {
    // Each is bound to a spare keycode just before it is typed; a key pressed before the page's
    // keymap knew the binding used to drop its character (the first fresh one on a new desktop).
    const id = await create();
    expect((await navigate(id, `${fixtures.url}/field.html`)).body.status).toBe('success');
    expect((await post(id, 'click', { x: 640, y: 400 })).body.status).toBe('success');
    let text = '';
    for (let n = 0; n < 30; n++) {
      // Fresh characters first in a call, then in the middle of ASCII, then many in one call.
      const fresh = String.fromCodePoint(0x4e00 + n);
      const piece = n < 10 ? `${fresh}${n}` : n < 20 ? `${n}${fresh}${n}` : `${fresh}√ü€ñ`;
      text += piece;
      expect((await post(id, 'type', { text: piece })).body.status).toBe('success');
    }
    const title = () => post(id, 'html', {}).then((html) => html.body.result.title as string);
    await eventually(async () => (await title()) === text, 5_000).catch(() => undefined);
    expect(await title()).toBe(text);
  });

  it('ends with its desktop: deleting the computer leaves no Chromium on the display', async () => {
    const id = await create();
    const display = displayOf(server, id);
    expect((await navigate(id, 'a')).body.status).toBe('success');
    expect((await newTab(id, 'b')).body.status).toBe('success');
    expect(await browsersOn(display)).toHaveLength(1);
    const deleting = await processClock();
    expect((await server.request('DELETE', `/computers/${id}`)).status).toBe(204);
    expect(await processesOnDisplay(display, { startedBefore: deleting })).toEqual([]);
  });
});

describe('a desktop where browser.executable_path names no Chromium', () => {
  it('starts, and opening its browser says Chromium is not found', async () => {
    const executable = '/opt/no-chromium-here/chrome';
    const own = await startTestServer({ browser: { warm_pool: 0, executable_path: executable } });
    try {
      const created = await own.request('POST', '/computers', { kind: 'desktop' });
      expect(created.status, created.text).toBe(200);
      const opened = await own.request('POST', `/computers/${created.body.id}/navigate`, {
        url: productUrl('a'),
      });
      expect(opened.body.status, opened.text).toBe('error');
      expect(opened.body.error_message).toBe(
        `Chromium not found at ${executable}: install Chromium (Debian/Ubuntu: apt-get install chromium) or set browser.executable_path`,
      );
      const ran = await own.request('POST', `/computers/${created.body.id}/exec/sync`, {
        command: 'echo still here',
      });
      expect(ran.body).toMatchObject({ exit_code: 0, stdout: 'still here\n' });
    } finally {
      await own.close();
    }
  });
});
