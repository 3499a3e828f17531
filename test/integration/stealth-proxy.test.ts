import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { startHttpProxy, type HttpProxy } from '../helpers/http-proxy.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PASSWORD = 'pr0xy-s3cret';
const STEALTH = {
  user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) BenchtopTest/1.0',
  locale: 'de-DE',
  timezone: 'Europe/Berlin',
};

type Whoami = { user_agent: string; language: string; timezone: string; webdriver: string };

let server: TestServer;
let fixtures: FixtureServer;
let proxy: HttpProxy;
let proxyUrl: string;
/** Everything the server logged, and everything written to the console, while the tests ran. */
const logged: string[] = [];
const created: string[] = [];

/** Chromium never proxies loopback; the fixture is reached by this machine's name instead. */
const whoamiUrl = () => `${fixtures.url.replace('127.0.0.1', hostname())}/whoami.html`;

async function createComputer(body: Record<string, unknown>): Promise<string> {
  const response = await server.request('POST', '/computers', body);
  expect(response.status, response.text).toBe(200);
  created.push(response.body.id);
  return response.body.id;
}

/** What whoami.html shows, read back through the computer's own /html action. */
async function whoami(id: string): Promise<Whoami> {
  const response = await server.request('POST', `/computers/${id}/html`, {});
  expect(response.body.status, response.text).toBe('success');
  const match = /<script type="application\/json" id="state">([\s\S]*?)<\/script>/.exec(
    response.body.result.html_content,
  );
  if (!match) throw new Error('the page is not whoami.html');
  return JSON.parse(match[1]!) as Whoami;
}

async function open(id: string, url = whoamiUrl()): Promise<void> {
  const response = await server.request('POST', `/computers/${id}/navigate`, { url });
  expect(response.body.status, response.text).toBe('success');
}

beforeAll(async () => {
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    });
  }
  [fixtures, proxy] = await Promise.all([
    startFixtureServer(),
    startHttpProxy({ username: 'agent', password: PASSWORD }),
  ]);
  proxyUrl = proxy.url.replace('http://', `http://agent:${PASSWORD}@`);
  server = await startTestServer(
    { proxy: { advanced_proxy_url: proxyUrl } },
    { log: (line) => logged.push(line) },
  );
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close(), proxy?.close()]);
  vi.restoreAllMocks();
});
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => server.request('DELETE', `/computers/${id}`)));
});

describe('stealth', () => {
  it('shows the user agent, locale and time zone to pages, and hides navigator.webdriver', async () => {
    const id = await createComputer({ stealth: STEALTH });
    await open(id);
    expect(await whoami(id)).toEqual({
      user_agent: STEALTH.user_agent,
      language: 'de-DE',
      timezone: 'Europe/Berlin',
      webdriver: 'false',
    });
  });

  it('leaves navigator.webdriver alone without stealth or with hide_webdriver: false', async () => {
    const plain = await createComputer({});
    const shown = await createComputer({ stealth: { hide_webdriver: false } });
    await Promise.all([open(plain), open(shown)]);
    expect((await whoami(plain)).webdriver).toBe('true');
    expect((await whoami(shown)).webdriver).toBe('true');
  });

  it('hides navigator.webdriver in tabs opened later and takes time zones in any case', async () => {
    const id = await createComputer({ stealth: { timezone: 'utc' } });
    const tab = await server.request('POST', `/computers/${id}/tabs`, { url: whoamiUrl() });
    expect(tab.body.status, tab.text).toBe('success');
    expect(await whoami(id)).toMatchObject({ timezone: 'UTC', webdriver: 'false' });
  });

  it('answers an unknown option with 400 listing the known ones', async () => {
    const response = await server.request('POST', '/computers', {
      stealth: { ...STEALTH, fingerprint: 'random' },
    });
    expect(response.status).toBe(400);
    expect(response.body.param).toBe('stealth.fingerprint');
    for (const known of ['user_agent', 'locale', 'timezone', 'hide_webdriver']) {
      expect(response.body.message).toContain(known);
    }
  });

  it.each([
    [{ timezone: 'Mars/Olympus_Mons' }, 'stealth.timezone', 'IANA'],
    [{ timezone: '' }, 'stealth.timezone', 'IANA'],
    [{ locale: 'not a locale' }, 'stealth.locale', 'BCP 47'],
    [{ user_agent: 42 }, 'stealth.user_agent', 'string'],
    [{ hide_webdriver: 'yes' }, 'stealth.hide_webdriver', 'boolean'],
  ])('answers stealth %j with 400 naming %s', async (stealth, param, words) => {
    const response = await server.request('POST', '/computers', { stealth });
    expect(response.status).toBe(400);
    expect(response.body.param).toBe(param);
    expect(response.body.message).toContain(words);
  });

  it('is for browser computers only', async () => {
    const response = await server.request('POST', '/computers', {
      kind: 'desktop',
      stealth: STEALTH,
    });
    expect(response.status).toBe(400);
    expect(response.body.param).toBe('stealth');
  });

  it('survives change-proxy, which rebuilds the context', async () => {
    const id = await createComputer({ stealth: STEALTH });
    await open(id);
    proxy.log.length = 0;
    const changed = await server.request('POST', `/computers/${id}/change-proxy`, {
      proxy_url: proxyUrl,
    });
    expect(changed.body.status, changed.text).toBe('success');
    expect(changed.body.result.page_state_reloaded).toBe(true);
    expect(proxy.log).toContain(`GET ${whoamiUrl()}`);
    expect(await whoami(id)).toEqual({
      user_agent: STEALTH.user_agent,
      language: 'de-DE',
      timezone: 'Europe/Berlin',
      webdriver: 'false',
    });
  });
});

describe('use_advanced_proxy', () => {
  it('sends the computer through the configured proxy, with its credentials', async () => {
    proxy.log.length = 0;
    const id = await createComputer({ use_advanced_proxy: true });
    await open(id);
    expect(proxy.log).toContain(`GET ${whoamiUrl()}`);
    expect((await whoami(id)).webdriver).toBe('true');

    const direct = await createComputer({});
    const before = proxy.log.length;
    await open(direct);
    expect(proxy.log).toHaveLength(before);
  });

  it('keeps stealth and the proxy together', async () => {
    proxy.log.length = 0;
    const id = await createComputer({ use_advanced_proxy: true, stealth: STEALTH });
    await open(id);
    expect(proxy.log).toContain(`GET ${whoamiUrl()}`);
    expect((await whoami(id)).user_agent).toBe(STEALTH.user_agent);
  });

  it('never shows the proxy password in responses or logs', async () => {
    const replies: string[] = [];
    const record = async (method: string, path: string, body?: unknown) => {
      const response = await server.request(method, path, body);
      replies.push(response.text);
      return response;
    };
    const made = await record('POST', '/computers', { use_advanced_proxy: true });
    const id = made.body.id as string;
    created.push(id);
    await record('GET', `/computers/${id}`);
    await record('GET', '/computers');
    await record('POST', `/computers/${id}/navigate`, { url: whoamiUrl() });
    await record('POST', `/computers/${id}/change-proxy`, { proxy_url: proxyUrl });
    await record('POST', `/computers/${id}/execute`, {
      action: { type: 'change_proxy', proxy_url: proxyUrl },
    });
    // Error paths: a proxy that is not there, and a navigation that fails behind it.
    const dead = `http://agent:${PASSWORD}@127.0.0.1:9`;
    await record('POST', `/computers/${id}/change-proxy`, { proxy_url: dead });
    const failed = await record('POST', `/computers/${id}/navigate`, { url: whoamiUrl() });
    expect(failed.body.status).toBe('error');
    await record('POST', `/computers/${id}/change-proxy`, { proxy_url: `${dead}:bad` });
    await record('DELETE', `/computers/${id}`);

    expect(replies.join('\n')).toContain('***');
    for (const text of [...replies, ...logged]) expect(text).not.toContain(PASSWORD);
  });

  it('answers 400 naming use_advanced_proxy when no proxy is configured', async () => {
    const bare = await startTestServer({ browser: { warm_pool: 0 } });
    try {
      const response = await bare.request('POST', '/computers', { use_advanced_proxy: true });
      expect(response.status).toBe(400);
      expect(response.body.param).toBe('use_advanced_proxy');
      expect(response.body.message).toContain('proxy.advanced_proxy_url');
    } finally {
      await bare.close();
    }
  });
});
