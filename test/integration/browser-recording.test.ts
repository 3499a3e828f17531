import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveSettings, type Settings } from '../../src/main/core/config.js';
import { BrowserHost } from '../../src/main/core/computers/browser/browser-host.js';
import type { BrowserOperator } from '../../src/main/core/computers/browser/browser-operator.js';
import { recoverTrace } from '../../src/main/core/computers/browser/browser-trace.js';
import { HAR_LOG, writeHar, type HarEntry } from '../../src/main/core/computers/browser/har.js';
import { BrowserDriver } from '../../src/main/core/computers/drivers/browser-driver.js';
import type { RecordingSink } from '../../src/main/core/computers/drivers/driver.js';
import { EnvironmentStore } from '../../src/main/core/store/environment-store.js';
import { startHttpProxy, type HttpProxy } from '../helpers/http-proxy.js';

/** vi.waitFor with room for a loaded machine (its own default gives up after one second). */
const settles = <T>(check: () => T | Promise<T>) =>
  vi.waitFor(check, { timeout: 15_000, interval: 50 });

const COOKIE = `c00kie-${randomBytes(6).toString('hex')}`;
const TOKEN = `t0ken-${randomBytes(6).toString('hex')}`;
const PASSWORD = `pr0xy-${randomBytes(6).toString('hex')}`;
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const PAGE = `<!doctype html><html><head><title>recorded</title><link rel="icon" href="data:,">
<script src="/script.js"></script></head>
<body><img src="/image.png"><button style="width:300px;height:200px">press</button></body></html>`;

const BIG = 'style="display:block;width:300px;height:200px"';

/** Logs, fetches (the last one, /missing, after one that fails), and throws. */
const script = () => `console.log('x');
fetch('/api/data?x=1', {
  method: 'POST',
  body: 'hello',
  headers: { 'content-type': 'text/plain', authorization: 'Bearer ${TOKEN}' },
})
  .then(() => fetch('${unreachable}/unreachable').catch(() => {}))
  .then(() => fetch('/missing'));
setTimeout(() => { throw new Error('boom'); });`;

/** The pages a recorded computer loads: a redirect, a page with a script, an image and fetches. */
function site(): Server {
  return createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    req.resume();
    if (path === '/opener.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<link rel="icon" href="data:,"><a href="/page.html" target="_blank" ${BIG}>open</a>`,
      );
    } else if (path === '/start') res.writeHead(302, { location: '/page.html' }).end();
    else if (path === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': `session=${COOKIE}` });
      res.end(PAGE);
    } else if (path === '/script.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script());
    } else if (path === '/image.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else if (path === '/api/data') {
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
}

let server: Server;
let base: string;
/** An address where nothing listens. */
let unreachable: string;
let host: BrowserHost;
let tracesDir: string;
let root: string;
let proxy: HttpProxy;
let settings: Settings;
const operators: BrowserOperator[] = [];

type Recorded = {
  dir: string;
  consoled: Parameters<RecordingSink['console']>[0][];
  operator: BrowserOperator;
  /** Ends the computer and waits for what its recording writes after (trace.zip). */
  end: () => Promise<void>;
};

/** A recorded browser computer started the way the registry starts one. */
async function recordedComputer(
  body: Record<string, unknown> = {},
  scrub: (text: string) => string = (text) => text,
): Promise<Recorded> {
  const dir = mkdtempSync(join(root, 'recording-'));
  const consoled: Recorded['consoled'] = [];
  const later: Promise<void>[] = [];
  const driver = new BrowserDriver({
    browsers: host,
    environments: new EnvironmentStore(join(root, 'environments')),
    settings: () => settings,
  });
  const started = await driver.prepare({ kind: 'browser', ...body }).start({
    id: 'computer',
    org: 'local',
    workspace: dir,
    privateDir: dir,
    sandboxed: false,
    network: true,
    terminal: false,
    recording: {
      dir,
      scrub,
      console: (entry) => consoled.push(entry),
      finishLater: (work) => later.push(work),
    },
    maxTabs: () => 20,
    report: () => {},
    onCrash: () => {},
  });
  const operator = started.operator as BrowserOperator;
  operators.push(operator);
  const end = async () => {
    await operator.close();
    await Promise.all(later);
  };
  return { dir, consoled, operator, end };
}

async function perform(operator: BrowserOperator, action: Record<string, unknown>) {
  return operator.perform({
    action: action as never,
    requestId: 'request',
    includeContext: false,
  });
}

function harLines(dir: string): HarEntry[] {
  const content = existsSync(join(dir, HAR_LOG)) ? readFileSync(join(dir, HAR_LOG), 'utf8') : '';
  return content
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as HarEntry);
}

async function harDocument(dir: string): Promise<{ raw: string; har: any }> {
  const out = new PassThrough();
  const [raw] = await Promise.all([text(out), writeHar(dir, out)]);
  return { raw, har: JSON.parse(raw) };
}

/** The entries of a zip, by name, as text. */
async function unzip(path: string): Promise<Map<string, string>> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(readFileSync(path), { lazyEntries: true }, (error, file) =>
      error ? reject(error) : resolve(file),
    ),
  );
  const entries = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        void text(stream).then((content) => {
          entries.set(entry.fileName, content);
          zip.readEntry();
        }, reject);
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

/** The calls a trace recorded, as `Class.method`, from each context's events. */
function tracedCalls(entries: Map<string, string>): string[][] {
  return [...entries.keys()]
    .filter((name) => name.endsWith('.trace'))
    .sort()
    .map((name) =>
      entries
        .get(name)!
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as { type: string; class?: string; method?: string })
        .filter((event) => event.type === 'before')
        .map((event) => `${event.class}.${event.method}`),
    );
}

const pathOf = (entry: HarEntry) => new URL(entry.request.url).pathname;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'benchtop-browser-recording-'));
  tracesDir = join(root, 'traces');
  server = site();
  // On all interfaces: Chromium never proxies loopback, so the proxy test uses this machine's name.
  await new Promise<void>((resolve) => server.listen(0, resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy = await startHttpProxy({ username: 'agent', password: PASSWORD });
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
  settings = resolveSettings({
    stored: {},
    flags: {
      proxy: { advanced_proxy_url: proxy.url.replace('http://', `http://agent:${PASSWORD}@`) },
    },
  });
  host = new BrowserHost({ executable_path: null, headless: true, warm_pool: 0 }, { tracesDir });
});
afterEach(async () => {
  await Promise.all(operators.splice(0).map((operator) => operator.close()));
});
afterAll(async () => {
  await host?.close();
  await Promise.all([new Promise((resolve) => server?.close(resolve)), proxy?.close()]);
  rmSync(root, { recursive: true, force: true });
});

describe('a recorded browser computer', () => {
  it('writes every request of its page to the HAR, with statuses, and no credentials', async () => {
    const { dir, operator } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/start` });
    await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));

    const { raw, har } = await harDocument(dir);
    expect(har.log).toMatchObject({ version: '1.2', creator: { name: 'Benchtop' } });
    const entries = har.log.entries as HarEntry[];
    expect(
      Object.fromEntries(entries.map((entry) => [pathOf(entry), entry.response.status])),
    ).toEqual({
      '/start': 302,
      '/page.html': 200,
      '/script.js': 200,
      '/image.png': 200,
      '/api/data': 201,
      '/unreachable': 0,
      '/missing': 404,
    });
    expect(entries).toHaveLength(7);

    const byPath = new Map(entries.map((entry) => [pathOf(entry), entry]));
    expect(byPath.get('/start')!.response.redirectURL).toBe(`${base}/page.html`);
    const post = byPath.get('/api/data')!;
    expect(post.request).toMatchObject({
      method: 'POST',
      queryString: [{ name: 'x', value: '1' }],
      postData: { mimeType: 'text/plain', text: 'hello' },
      bodySize: 5,
    });
    expect(byPath.get('/image.png')!.response.content).toEqual({
      size: PNG.length,
      mimeType: 'image/png',
    });
    expect(byPath.get('/page.html')!._resourceType).toBe('document');
    expect(byPath.get('/unreachable')!._failureText).toMatch(/ERR_CONNECTION_REFUSED/);
    for (const entry of entries) {
      expect(entry.pageref).toBe(operator.mainTabId());
      expect(Date.parse(entry.startedDateTime)).toBeGreaterThan(0);
      expect(entry.time).toBeGreaterThanOrEqual(0);
    }
    expect(har.log.pages).toEqual([
      expect.objectContaining({ id: operator.mainTabId(), title: `${base}/start` }),
    ]);

    // The cookie the page set, and the token its script sent, are in no line of it.
    const header = (entry: HarEntry, side: 'request' | 'response', name: string) =>
      entry[side].headers.find((h) => h.name.toLowerCase() === name)?.value;
    expect(header(byPath.get('/page.html')!, 'response', 'set-cookie')).toBe('[redacted]');
    expect(header(post, 'request', 'cookie')).toBe('[redacted]');
    expect(header(post, 'request', 'authorization')).toBe('[redacted]');
    for (const secret of [COOKIE, TOKEN]) {
      expect(raw).not.toContain(secret);
      expect(readFileSync(join(dir, HAR_LOG), 'utf8')).not.toContain(secret);
    }
  });

  it('records the whole first load of a tab its page opens', async () => {
    const { dir, operator } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/opener.html` });
    const opener = operator.mainTabId();
    await perform(operator, { type: 'click', at: { x: 100, y: 100 }, button: 'left', count: 1 });
    // The tab the site opened becomes main.
    await settles(() => expect(operator.mainTabId()).not.toBe(opener));
    const opened = operator.mainTabId();
    const pages = () =>
      Object.fromEntries(harLines(dir).map((entry) => [pathOf(entry), entry.pageref]));
    await settles(() =>
      expect(pages()).toEqual({
        '/opener.html': opener,
        '/page.html': opened,
        '/script.js': opened,
        '/image.png': opened,
        '/api/data': opened,
        '/unreachable': opened,
        '/missing': opened,
      }),
    );
    // Each once: what the tab's own session saw is not filled in again.
    expect(harLines(dir)).toHaveLength(7);
  });

  it('records the first load of a tab it opens with new_tab', async () => {
    const { dir, operator } = await recordedComputer();
    const { result } = await perform(operator, { type: 'new_tab', url: `${base}/page.html` });
    await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));
    expect(harLines(dir).find((entry) => pathOf(entry) === '/page.html')?.pageref).toBe(
      result.created_tab_id,
    );
  });

  it('passes every HAR line through the sink’s scrub', async () => {
    const { dir, operator } = await recordedComputer({}, (line) =>
      line.replaceAll('image.png', '[scrubbed]'),
    );
    await perform(operator, { type: 'navigate', url: `${base}/page.html` });
    await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));
    expect(harLines(dir).map(pathOf)).toContain('/[scrubbed]');
  });

  it('sends console messages and uncaught errors of its pages to the sink', async () => {
    const { consoled, operator } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/page.html` });
    await settles(() => expect(consoled.map((entry) => entry.level)).toContain('pageerror'));
    expect(consoled).toContainEqual({
      level: 'log',
      text: 'x',
      url: `${base}/script.js`,
      tabId: operator.mainTabId(),
    });
    expect(consoled).toContainEqual(
      expect.objectContaining({
        level: 'pageerror',
        text: expect.stringContaining('boom'),
        url: `${base}/script.js`,
        tabId: operator.mainTabId(),
      }),
    );
  });

  it('leaves a Playwright trace of its actions when it closes', async () => {
    const { dir, operator, end } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/page.html` });
    await perform(operator, { type: 'click', at: { x: 100, y: 100 }, button: 'left', count: 1 });
    await perform(operator, { type: 'type', text: 'typed' });
    await end();

    const entries = await unzip(join(dir, 'trace.zip'));
    expect([...entries.keys()].sort()).toEqual(['trace.network', 'trace.trace']);
    const [calls] = tracedCalls(entries);
    expect(calls).toEqual(
      expect.arrayContaining(['Frame.goto', 'Page.mouseClick', 'Page.keyboardType']),
    );
    // What tracing wrote as it went is gone once the zip holds it.
    expect(readdirSync(tracesDir).filter((name) => /\.(trace|network)$/.test(name))).toEqual([]);
    expect(existsSync(join(dir, 'trace.parts'))).toBe(false);
  });

  it('keeps recording across change_proxy: both contexts in the trace, requests of both in the HAR', async () => {
    const { dir, operator, end } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/page.html` });
    await perform(operator, { type: 'change_proxy', proxyUrl: settings.proxy.advanced_proxy_url });
    await perform(operator, { type: 'navigate', url: `${base}/missing?after=proxy` });
    await end();

    const traced = tracedCalls(await unzip(join(dir, 'trace.zip')));
    expect(traced).toHaveLength(2);
    expect(traced[1]).toContain('Frame.goto');
    const urls = harLines(dir).map((entry) => entry.request.url);
    expect(urls).toContain(`${base}/page.html`);
    expect(urls).toContain(`${base}/missing?after=proxy`);
  });

  it('writes no proxy credential anywhere in the HAR', async () => {
    const { dir, operator } = await recordedComputer({ use_advanced_proxy: true });
    const url = `${base.replace('127.0.0.1', hostname())}/page.html`;
    await perform(operator, { type: 'navigate', url });
    await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));
    expect(proxy.log).toContain(`GET ${url}`);

    const { raw } = await harDocument(dir);
    const basic = Buffer.from(`agent:${PASSWORD}`).toString('base64');
    for (const written of [raw, readFileSync(join(dir, HAR_LOG), 'utf8')]) {
      expect(written).not.toContain(PASSWORD);
      expect(written).not.toContain(basic);
    }
  });

  it('writes a HAR document from a log a kill cut in the middle of a line', async () => {
    const { dir, operator, end } = await recordedComputer();
    await perform(operator, { type: 'navigate', url: `${base}/page.html` });
    await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));
    await end();
    await appendFile(join(dir, HAR_LOG), '{"startedDateTime":"2026-01-01T00:00:00.000Z","requ');

    const { har } = await harDocument(dir);
    expect(har.log.entries.map(pathOf).sort()).toEqual([
      '/api/data',
      '/image.png',
      '/missing',
      '/page.html',
      '/script.js',
      '/unreachable',
    ]);
  });

  it('writes an empty HAR document when nothing was requested', async () => {
    const { har } = await harDocument(mkdtempSync(join(root, 'empty-')));
    expect(har).toEqual({
      log: {
        version: '1.2',
        creator: { name: 'Benchtop', version: expect.any(String) },
        pages: [],
        entries: [],
      },
    });
  });
});

describe('after Benchtop was killed', () => {
  it('keeps the HAR so far, and recoverTrace makes trace.zip from what tracing wrote', async () => {
    const dir = mkdtempSync(join(root, 'killed-'));
    const killedTraces = join(root, 'killed-traces');
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
    const modules = (name: string) =>
      JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/main/core', name)).href);
    // A Benchtop of its own that records a computer, acts, says so, and waits to be killed.
    const script = `
      const { BrowserHost } = await import(${modules('computers/browser/browser-host.ts')});
      const { BrowserDriver } = await import(${modules('computers/drivers/browser-driver.ts')});
      const { resolveSettings } = await import(${modules('config.ts')});
      const host = new BrowserHost({ executable_path: null, headless: true, warm_pool: 0 }, { tracesDir: ${JSON.stringify(killedTraces)} });
      const driver = new BrowserDriver({ browsers: host, environments: undefined, settings: () => resolveSettings({ stored: {} }) });
      const dir = ${JSON.stringify(dir)};
      const { operator } = await driver.prepare({ kind: 'browser' }).start({
        id: 'killed', org: 'local', workspace: dir, privateDir: dir, sandboxed: false, network: true,
        terminal: false, maxTabs: () => 20, report: () => {}, onCrash: () => {},
        recording: { dir, scrub: (text) => text, console: () => {}, finishLater: () => {} },
      });
      const act = (action) => operator.perform({ action, requestId: 'r', includeContext: false });
      await act({ type: 'navigate', url: ${JSON.stringify(`${base}/page.html`)} });
      await act({ type: 'click', at: { x: 100, y: 100 }, button: 'left', count: 1 });
      console.log('acted');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('acted')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`the recording process exited (${code})`)));
      });
      // Tracing appends each event as it happens; the click's end is what is waited for.
      const part = () =>
        join(
          killedTraces,
          readdirSync(killedTraces).find((name) => name.endsWith('.trace'))!,
        );
      await settles(() => expect(readFileSync(part(), 'utf8')).toContain('"mouseClick"'));
      await settles(() => expect(harLines(dir).map(pathOf)).toContain('/missing'));
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) =>
      child.exitCode === null ? child.once('exit', resolve) : resolve(null),
    );
    const rawTrace = readdirSync(killedTraces).find((name) => name.endsWith('.trace'))!;
    // The kill may cut a line in two: it is left out.
    await appendFile(join(killedTraces, rawTrace), '{"type":"before","callId":"torn');
    expect(existsSync(join(dir, 'trace.zip'))).toBe(false);

    expect(await recoverTrace(dir)).toBe(true);
    const [calls] = tracedCalls(await unzip(join(dir, 'trace.zip')));
    expect(calls).toEqual(expect.arrayContaining(['Frame.goto', 'Page.mouseClick']));
    expect(readdirSync(killedTraces).filter((name) => /\.(trace|network)$/.test(name))).toEqual([]);
    expect((await harDocument(dir)).har.log.entries.map(pathOf)).toContain('/image.png');
    // Asked again, there is nothing more to do.
    expect(await recoverTrace(dir)).toBe(true);
  });

  it('recoverTrace answers false for a recording that was never traced', async () => {
    expect(await recoverTrace(mkdtempSync(join(root, 'untraced-')))).toBe(false);
  });
});
