import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { startHttpProxy } from '../helpers/http-proxy.js';
import { pageState } from '../helpers/page-state.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let fixtures: FixtureServer;
let id: string;

const tabs = async () =>
  (await server.request('GET', `/computers/${id}/tabs`)).body.result.tabs as Array<
    Record<string, unknown>
  >;

beforeAll(async () => {
  [server, fixtures] = await Promise.all([
    startTestServer({ limits: { max_tabs: 4 } }),
    startFixtureServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), fixtures?.close()]);
});
beforeEach(async () => {
  id = (await server.request('POST', '/computers', {})).body.id;
  await server.request('POST', `/computers/${id}/navigate`, {
    url: `${fixtures.url}/actions.html`,
  });
});
afterEach(async () => {
  await server.request('DELETE', `/computers/${id}`);
});

describe('tabs', () => {
  it('opens, lists, switches and closes tabs', async () => {
    const [first] = await tabs();
    expect(first).toMatchObject({
      url: `${fixtures.url}/actions.html`,
      title: 'Actions fixture',
      is_main: true,
    });
    expect(first!.id).toBe(first!.tab_id);

    const opened = await server.request('POST', `/computers/${id}/tabs`, {
      url: `${fixtures.url}/tab.html`,
    });
    const second = opened.body.result.created_tab_id as string;
    expect(opened.body.executed_tab_id).toBe(second);
    expect(opened.body.page_context).toMatchObject({ title: 'Second tab', is_main_tab: true });
    expect((await tabs()).map((tab) => [tab.title, tab.is_main])).toEqual([
      ['Actions fixture', false],
      ['Second tab', true],
    ]);
    // Actions without tab_id run on the main tab; with tab_id on the named one.
    expect((await server.request('POST', `/computers/${id}/html`, {})).body.result.title).toBe(
      'Second tab',
    );
    const named = await server.request('POST', `/computers/${id}/html`, { tab_id: first!.tab_id });
    expect(named.body.result.title).toBe('Actions fixture');
    expect(named.body.executed_tab_id).toBe(first!.tab_id);

    const switched = await server.request(
      'POST',
      `/computers/${id}/tabs/${first!.tab_id as string}/switch`,
    );
    expect(switched.body.result).toEqual({ active_tab: first!.tab_id });
    expect((await server.request('POST', `/computers/${id}/html`, {})).body.result.title).toBe(
      'Actions fixture',
    );

    const blank = await server.request('POST', `/computers/${id}/tabs`);
    expect((await tabs()).at(-1)).toMatchObject({
      url: 'about:blank',
      is_main: true,
      tab_id: blank.body.result.created_tab_id,
    });

    const closed = await server.request(
      'DELETE',
      `/computers/${id}/tabs/${blank.body.result.created_tab_id as string}`,
    );
    expect(closed.body.result).toEqual({ closed_tab: blank.body.result.created_tab_id });
    // The most recently opened remaining tab becomes main.
    expect((await tabs()).map((tab) => [tab.title, tab.is_main])).toEqual([
      ['Actions fixture', false],
      ['Second tab', true],
    ]);
  });

  it('lists pages the site opens', async () => {
    await server.request('POST', `/computers/${id}/click`, { x: 110, y: 557 });
    const list = await eventually(async () => {
      const current = await tabs();
      return current.length === 2 && current[1]!.title === 'Second tab' && current;
    });
    expect(list[1]!.is_main).toBe(true);
  });

  it('refuses to close the last tab, unknown tabs and more than max_tabs', async () => {
    const [only] = await tabs();
    const last = await server.request('DELETE', `/computers/${id}/tabs/${only!.tab_id as string}`);
    expect(last.status).toBe(400);
    expect(last.body.message).toContain('last tab');
    expect((await server.request('DELETE', `/computers/${id}/tabs/tab_nope`)).status).toBe(404);
    expect((await server.request('POST', `/computers/${id}/tabs/tab_nope/switch`)).status).toBe(
      404,
    );
    for (let n = 0; n < 3; n++)
      expect((await server.request('POST', `/computers/${id}/tabs`)).status).toBe(200);
    const over = await server.request('POST', `/computers/${id}/tabs`);
    expect(over.status).toBe(400);
    expect(over.body.message).toContain('at most 4 tabs');
    expect(await tabs()).toHaveLength(4);
  });

  it('handles tab actions through /execute', async () => {
    const opened = await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'new_tab', url: `${fixtures.url}/tab.html` },
    });
    const tabId = opened.body.result.created_tab_id as string;
    const listed = await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'list_tabs' },
    });
    expect(listed.body.result.tabs).toHaveLength(2);
    const [first] = listed.body.result.tabs as Array<{ tab_id: string }>;
    await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'switch_tab', tab_id: first!.tab_id },
    });
    const closed = await server.request('POST', `/computers/${id}/execute`, {
      action: { type: 'close_tab', tab_id: tabId },
    });
    expect(closed.body.result).toEqual({ closed_tab: tabId });
    expect(await tabs()).toHaveLength(1);
  });
});

describe('batch', () => {
  it('runs actions in order and returns one result each', async () => {
    const response = await server.request('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'click', x: 500, y: 150 },
        { type: 'type', text: 'one' },
        { type: 'keypress', keys: ['shift+1'] },
        { type: 'wait', ms: 10 },
        { type: 'screenshot' },
      ],
    });
    expect(response.body).toMatchObject({ success: true, failed_index: null, error_message: null });
    expect(response.body.results).toHaveLength(5);
    expect(response.body.results[4].result.width).toBe(1280);
    expect((await pageState(server, id)).typed).toBe('one!');
  });

  it('stops at the first failing action', async () => {
    const response = await server.request('POST', `/computers/${id}/batch`, {
      actions: [
        { type: 'click', x: 150, y: 150 },
        { type: 'switch_tab', tab_id: 'tab_missing' },
        { type: 'click', x: 160, y: 160 },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(false);
    expect(response.body.failed_index).toBe(1);
    expect(response.body.results).toHaveLength(2);
    expect(response.body.results[1].status).toBe('error');
    expect(response.body.error_message).toContain('tab_missing');
    const log = (await pageState(server, id)).events;
    expect(log).toContain('click 150,150 left detail=1 on target');
    expect(log.some((line) => line.startsWith('click 160,160'))).toBe(false);
  });

  it('answers an empty list with success', async () => {
    const response = await server.request('POST', `/computers/${id}/batch`, { actions: [] });
    expect(response.body).toEqual({
      success: true,
      results: [],
      failed_index: null,
      error_message: null,
    });
  });
});

describe('change-proxy', () => {
  it('sends later traffic through the proxy, with credentials, and keeps the open tabs', async () => {
    const proxy = await startHttpProxy({ username: 'user', password: 's3cret' });
    try {
      // Chromium never proxies loopback; the fixture is reached by this machine's name instead.
      const { hostname } = await import('node:os');
      const page = `${fixtures.url.replace('127.0.0.1', hostname())}/tab.html`;
      await server.request('POST', `/computers/${id}/navigate`, { url: page });
      expect(proxy.log).toEqual([]);
      await server.request('POST', `/computers/${id}/execute`, {
        type: 'navigate',
        url: 'data:text/html,x',
      });

      await server.request('POST', `/computers/${id}/tabs`, { url: page });
      const before = (await tabs()).map((tab) => tab.tab_id);
      proxy.log.length = 0;

      const proxyUrl = proxy.url.replace('http://', 'http://user:s3cret@');
      const changed = await server.request('POST', `/computers/${id}/change-proxy`, {
        proxy_url: proxyUrl,
      });
      expect(changed.body.status).toBe('success');
      expect(changed.body.result.page_state_reloaded).toBe(true);
      expect(JSON.stringify(changed.body)).not.toContain('s3cret');
      expect((await tabs()).map((tab) => tab.tab_id)).toEqual(before);
      // Reopening the tab went through the proxy already.
      expect(proxy.log).toContain(`GET ${page}`);

      const through = await server.request('POST', `/computers/${id}/navigate`, { url: page });
      expect(through.body.result.title).toBe('Second tab');
      expect(proxy.log).toContain(`GET ${page}`);

      const direct = await server.request('POST', `/computers/${id}/change-proxy`, {
        proxy_url: '',
      });
      expect(direct.body.status).toBe('success');
      const count = proxy.log.length;
      await server.request('POST', `/computers/${id}/navigate`, { url: page });
      expect(proxy.log).toHaveLength(count);
    } finally {
      await proxy.close();
    }
  });
});
