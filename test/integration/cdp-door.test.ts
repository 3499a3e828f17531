import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer, { TargetType } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Computer } from '../../src/shared/computers.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The CDP door (docs/API.md §16): Playwright and Puppeteer attached through a computer's cdp_url
 * drive that computer, see no other, and what they do reaches Benchtop's own view of it.
 */

type Tab = { tab_id: string; url: string; is_main: boolean };

let server: TestServer;
let fixtures: FixtureServer;
let first: Computer;
let second: Computer;

async function createCdp(body: Record<string, unknown> = {}): Promise<Computer> {
  const response = await server.request<Computer>('POST', '/computers', { cdp: true, ...body });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function tabs(id: string): Promise<Tab[]> {
  const response = await server.request('GET', `/computers/${id}/tabs`);
  return response.body.result.tabs as Tab[];
}

/** The main tab's markup as Benchtop reads it: what a person watching the computer sees. */
async function html(id: string): Promise<string> {
  const response = await server.request('POST', `/computers/${id}/html`, {});
  return response.body.result.html_content as string;
}

/** Where the upgrade of `url` ends: its HTTP status and body, or 101 once it opened. */
function upgrade(url: string): Promise<{ status: number; body: any; socket?: WebSocket }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    socket.on('open', () => resolve({ status: 101, body: undefined, socket }));
    socket.on('error', (error) => {
      if (!error.message.includes('Unexpected server response')) reject(error);
    });
  });
}

/** Sends one raw frame and resolves with the next message the endpoint answers. */
function ask(socket: WebSocket, frame: string | Buffer): Promise<any> {
  return new Promise((resolve) => {
    socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString())));
    socket.send(frame);
  });
}

/** The Chromium processes started with a profile under this computer's private folder. */
function chromiumOf(id: string): number {
  try {
    return execFileSync('pgrep', ['-f', `computers/${id}/chromium`], { encoding: 'utf8' })
      .trim()
      .split('\n').length;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
  [first, second] = await Promise.all([createCdp(), createCdp()]);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

describe('cdp: true', () => {
  it('gives a browser computer a cdp_url on this server with a token of its own', () => {
    for (const computer of [first, second]) {
      const url = new URL(computer.cdp_url!);
      expect(url.protocol).toBe('ws:');
      expect(url.host).toBe(new URL(server.url).host);
      expect(url.pathname).toBe(`/cdp/${computer.id}`);
      expect(url.searchParams.get('token')).toMatch(/^[\w-]{43}$/);
    }
    expect(first.cdp_url).not.toBe(second.cdp_url);
  });

  it('Playwright connectOverCDP drives its computer only, and Benchtop sees what it does', async () => {
    const before = await tabs(second.id);
    const events = await SseReader.open(`${server.url}/computers/${first.id}/events`, server.key);
    const browser = await chromium.connectOverCDP(first.cdp_url!);
    try {
      const [context, ...others] = browser.contexts();
      expect(others).toEqual([]);
      const own = (await tabs(first.id)).map((tab) => tab.url);
      expect(context!.pages().map((page) => page.url())).toEqual(own);
      const page = await context!.newPage();
      await page.goto(`${fixtures.url}/actions.html`);
      await page.mouse.click(150, 150);
      await eventually(async () => (await html(first.id)).includes('on target'));
      const listed = await tabs(first.id);
      const opened = listed.find((tab) => tab.url.endsWith('/actions.html'));
      expect(opened).toMatchObject({ is_main: true });
      const seen = await events.collect(500);
      const data = seen.map((event) => event.data as Record<string, unknown>);
      expect(data).toContainEqual(
        expect.objectContaining({ type: 'tab', event: 'opened', tab_id: opened!.tab_id }),
      );
      expect(data).toContainEqual(
        expect.objectContaining({ type: 'navigation', url: `${fixtures.url}/actions.html` }),
      );
      expect(await tabs(second.id)).toEqual(before);
      // The live view shows the page the client opened.
      const live = await SseReader.open(
        `${server.url}/computers/${first.id}/screencast?fps=5`,
        server.key,
      );
      const frame = (await live.next())!.data as { metadata: { tab_id: string } };
      live.close();
      expect(frame.metadata.tab_id).toBe(opened!.tab_id);
    } finally {
      events.close();
      await browser.close();
    }
    // Leaving does not close the computer's pages.
    expect((await tabs(first.id)).length).toBe(2);
  });

  it('Puppeteer connect drives its computer only', async () => {
    const before = await tabs(first.id);
    const browser = await puppeteer.connect({ browserWSEndpoint: second.cdp_url! });
    try {
      const own = (await tabs(second.id)).map((tab) => tab.url);
      expect((await browser.pages()).map((page) => page.url())).toEqual(own);
      const pageTargets = browser.targets().filter((target) => target.type() === TargetType.PAGE);
      expect(pageTargets.length).toBe(own.length);
      const page = await browser.newPage();
      await page.goto(`${fixtures.url}/actions.html`);
      await page.mouse.click(160, 170);
      await eventually(async () => (await html(second.id)).includes('click 160,170 left'));
      expect((await tabs(second.id)).some((tab) => tab.url.endsWith('/actions.html'))).toBe(true);
      expect(await tabs(first.id)).toEqual(before);
    } finally {
      await browser.disconnect();
    }
  });
});

describe('the upgrade', () => {
  it('refuses a wrong token, a missing token and an unknown computer', async () => {
    const url = new URL(first.cdp_url!);
    const wrong = `${url.origin}${url.pathname}?token=${'x'.repeat(43)}`;
    const refused = await upgrade(wrong);
    expect(refused).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(refused.body.message).toMatch(/wrong token/);
    const missing = await upgrade(`${url.origin}${url.pathname}`);
    expect(missing).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const unknown = await upgrade(`${url.origin}/cdp/comp_nope?${url.searchParams}`);
    expect(unknown).toMatchObject({ status: 404, body: { code: 'not_found' } });
    const elsewhere = await upgrade(`${url.origin}/other`);
    expect(elsewhere).toMatchObject({ status: 404, body: { code: 'not_found' } });
    // The other computer's token does not open this one.
    const crossed = `${url.origin}${url.pathname}?${new URL(second.cdp_url!).searchParams}`;
    expect(await upgrade(crossed)).toMatchObject({ status: 401 });
  });

  it('gives a computer created without cdp no cdp_url, and refuses its /cdp/{id}', async () => {
    const plain = (await server.request<Computer>('POST', '/computers', {})).body;
    try {
      expect(plain.cdp_url).toBeNull();
      const guessed = `${server.url.replace('http', 'ws')}/cdp/${plain.id}?token=x`;
      const refused = await upgrade(guessed);
      expect(refused).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(refused.body.message).toMatch(/created without cdp/);
    } finally {
      await server.request('DELETE', `/computers/${plain.id}`);
    }
  });

  it('refuses cdp on a desktop, naming the field', async () => {
    const response = await server.request('POST', '/computers', { kind: 'desktop', cdp: true });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_request', param: 'cdp' });
  });
});

describe('downloads of a cdp computer', () => {
  it("land in the computer's downloads, whatever folder the client names, and are listed", async () => {
    const computer = await createCdp();
    const browser = await puppeteer.connect({ browserWSEndpoint: computer.cdp_url! });
    const elsewhere = mkdtempSync(join(tmpdir(), 'benchtop-cdp-elsewhere-'));
    try {
      const page = await browser.newPage();
      const session = await browser.target().createCDPSession();
      await session.send('Browser.setDownloadBehavior', {
        behavior: 'allow',
        downloadPath: elsewhere,
      });
      await page.goto(`${fixtures.url}/downloads.html`);
      await page.click('#invoice');
      const [saved] = await eventually(async () => {
        const listed = await server.request('GET', `/computers/${computer.id}/downloads`);
        return listed.body.data.length > 0 && listed.body.data;
      });
      expect(saved).toMatchObject({ name: 'invoice.csv' });
      const file = await server.request('GET', `/computers/${computer.id}/downloads/invoice.csv`);
      expect(file.text).toBe(
        readFileSync(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv'), 'utf8'),
      );
      expect(readdirSync(elsewhere)).toEqual([]);
      // Kept in the computer's recording too: listed and served after the computer ended.
      await browser.disconnect();
      await server.request('DELETE', `/computers/${computer.id}`);
      const after = await server.request('GET', `/computers/${computer.id}/downloads`);
      expect(after.body.data, after.text).toEqual([
        expect.objectContaining({ name: 'invoice.csv' }),
      ]);
      const kept = await server.request('GET', `/computers/${computer.id}/downloads/invoice.csv`);
      expect(kept.text).toBe(file.text);
    } finally {
      await browser.disconnect();
      rmSync(elsewhere, { recursive: true, force: true });
      await server.request('DELETE', `/computers/${computer.id}`);
    }
  });
});

describe('what a client sends', () => {
  it('answers a refused method with an error and keeps the connection working', async () => {
    const { socket } = await upgrade(first.cdp_url!);
    try {
      const closing = await ask(socket!, JSON.stringify({ id: 1, method: 'Browser.close' }));
      expect(closing).toMatchObject({ id: 1, error: { code: -32000 } });
      expect(closing.error.message).toMatch(/Browser.close is refused.*DELETE \/computers/);
      const context = await ask(socket!, '{"id":2,"method":"Target.createBrowserContext"}');
      expect(context).toMatchObject({ id: 2, error: { code: -32000 } });
      // A second "method" key is what Chromium might read: it is never passed on as sent.
      const twice = '{"id":3,"method":"Browser.getVersion","method":"Browser.crash"}';
      expect(await ask(socket!, twice)).toMatchObject({ id: 3, error: { code: -32000 } });
      const version = await ask(socket!, '{"id":4,"method":"Browser.getVersion"}');
      expect(version.result.product).toMatch(/Chrome/);
    } finally {
      socket!.close();
    }
    expect(chromiumOf(first.id)).toBeGreaterThan(0);
  });

  it('answers garbage with CDP errors, and the server keeps serving', async () => {
    const { socket } = await upgrade(first.cdp_url!);
    try {
      expect(await ask(socket!, 'not json')).toMatchObject({ error: { code: -32700 } });
      expect(await ask(socket!, Buffer.from([0xff, 0x00, 0x7b]))).toMatchObject({
        error: { code: -32700 },
      });
      expect(await ask(socket!, '[1,2]')).toMatchObject({ error: { code: -32600 } });
      expect(await ask(socket!, '{"id":"x","method":"Page.enable"}')).toMatchObject({
        error: { code: -32600 },
      });
      expect(await ask(socket!, '{"id":5}')).toMatchObject({ id: 5, error: { code: -32600 } });
      const unknown = await ask(socket!, '{"id":6,"method":"No.such"}');
      expect(unknown).toMatchObject({ id: 6, error: { code: -32601 } });
      const version = await ask(socket!, '{"id":7,"method":"Browser.getVersion"}');
      expect(version).toMatchObject({ id: 7, result: expect.any(Object) });
    } finally {
      socket!.close();
    }
    expect((await server.request('GET', '/health')).status).toBe(200);
  });
});

describe('a client gone without a word', () => {
  it('is ended when it stops answering pings; one that answers stays attached', async () => {
    // A server that pings every 0.2 s (15 s by default).
    const heartbeatMs = 200;
    const pinging = await startTestServer({}, { sse: { heartbeatMs } });
    try {
      const created = await pinging.request<Computer>('POST', '/computers', { cdp: true });
      const url = created.body.cdp_url!;
      const silent = new WebSocket(url, { autoPong: false });
      const silentClosed = new Promise<number>((resolve) => silent.once('close', resolve));
      const browser = await chromium.connectOverCDP(url);
      expect(await silentClosed).toBe(1006);
      await new Promise((resolve) => setTimeout(resolve, heartbeatMs * 4));
      expect(browser.isConnected()).toBe(true);
      const page = browser.contexts()[0]!.pages()[0]!;
      expect(await page.evaluate(() => 6 * 7)).toBe(42);
      await browser.close();
    } finally {
      await pinging.close();
    }
  });
});

describe('the end of a computer', () => {
  it('closes open connections and its Chromium, and refuses its URL from then on', async () => {
    const computer = await createCdp();
    expect(chromiumOf(computer.id)).toBeGreaterThan(0);
    const { socket } = await upgrade(computer.cdp_url!);
    const closed = new Promise<number>((resolve) => socket!.on('close', (code) => resolve(code)));
    const browser = await chromium.connectOverCDP(computer.cdp_url!);
    const disconnected = new Promise<void>((resolve) =>
      browser.on('disconnected', () => resolve()),
    );
    expect((await server.request('DELETE', `/computers/${computer.id}`)).status).toBe(204);
    expect(await closed).toBe(1001);
    await disconnected;
    const refused = await upgrade(computer.cdp_url!);
    expect(refused).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(refused.body.message).toMatch(/has ended \(deleted/);
    const after = await server.request<Computer>('GET', `/computers/${computer.id}`);
    expect(after.body.cdp_url).toBeNull();
    await eventually(() => chromiumOf(computer.id) === 0);
  });
});

describe('a cdp computer as any other', () => {
  it('saves what a client stored when persistent, and a restored one has it', async () => {
    const saved = await createCdp({ persistent: true });
    const browser = await chromium.connectOverCDP(saved.cdp_url!);
    const page = browser.contexts()[0]!.pages()[0]!;
    await page.goto(`${fixtures.url}/actions.html`);
    await page.evaluate(() => {
      const { localStorage, document } = globalThis as any;
      localStorage.setItem('door', 'cdp');
      document.cookie = 'door=cdp; max-age=3600';
    });
    await browser.close();
    expect((await server.request('DELETE', `/computers/${saved.id}`)).status).toBe(204);
    const restored = await createCdp({ environment_id: saved.id });
    try {
      const again = await chromium.connectOverCDP(restored.cdp_url!);
      const [context] = again.contexts();
      expect((await context!.cookies()).map(({ name, value }) => `${name}=${value}`)).toContain(
        'door=cdp',
      );
      const next = context!.pages()[0]!;
      await next.goto(`${fixtures.url}/actions.html`);
      expect(
        await next.evaluate(() => (globalThis as any).localStorage.getItem('door') as string),
      ).toBe('cdp');
      await again.close();
    } finally {
      await server.request('DELETE', `/computers/${restored.id}`);
    }
  });

  it('is recorded: its events and HAR have what a client did', async () => {
    const computer = await createCdp();
    const browser = await puppeteer.connect({ browserWSEndpoint: computer.cdp_url! });
    const page = await browser.newPage();
    await page.goto(`${fixtures.url}/recorded.html`);
    await browser.disconnect();
    await server.request('DELETE', `/computers/${computer.id}`);
    const get = (path: string) =>
      fetch(`${server.url}/computers/${computer.id}/recording${path}`, {
        headers: { authorization: `Bearer ${server.key}` },
      }).then((answer) => answer.text());
    const events = await get('/events');
    expect(events).toContain(`"url":"${fixtures.url}/recorded.html"`);
    const har = JSON.parse(await get('/har'));
    const urls = har.log.entries.map((entry: any) => entry.request.url as string);
    expect(urls).toContain(`${fixtures.url}/recorded.html`);
    expect(events).not.toContain(new URL(computer.cdp_url!).searchParams.get('token'));
  });
});

describe("Benchtop's close", () => {
  it('ends the Chromium of every cdp computer and their connections', async () => {
    const other = await startTestServer();
    const created = await other.request<Computer>('POST', '/computers', { cdp: true });
    const { id, cdp_url: cdpUrl } = created.body;
    expect(chromiumOf(id)).toBeGreaterThan(0);
    const browser = await puppeteer.connect({ browserWSEndpoint: cdpUrl! });
    const disconnected = new Promise<void>((resolve) => browser.on('disconnected', resolve));
    await other.close();
    await disconnected;
    await eventually(() => chromiumOf(id) === 0);
  });
});
