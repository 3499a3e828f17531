import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** Limits changed through PATCH /settings apply to computers already running. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('limits.max_tabs changed while a browser computer runs', () => {
  it('applies to that computer at once, lowered and raised', async () => {
    const created = await server.request('POST', '/computers', { kind: 'browser' });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const openTab = () => server.request('POST', `/computers/${id}/tabs`);
    const setMaxTabs = async (max_tabs: number) => {
      const patched = await server.request('PATCH', '/settings', { limits: { max_tabs } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.settings.limits.max_tabs).toBe(max_tabs);
    };

    // Created under the default (20 tabs); the limit drops to 2 while it runs.
    await setMaxTabs(2);
    expect((await openTab()).status).toBe(200);
    const over = await openTab();
    expect(over.status).toBe(400);
    expect(over.body.message).toContain('at most 2 tabs');

    await setMaxTabs(3);
    expect((await openTab()).status).toBe(200);
    const tabs = await server.request('GET', `/computers/${id}/tabs`);
    expect(tabs.body.result.tabs).toHaveLength(3);
    await server.request('DELETE', `/computers/${id}`);
  });
});
