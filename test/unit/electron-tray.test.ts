import type { MenuItemConstructorOptions } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trayMenuTemplate } from '../../src/main/window/tray-menu.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ browser: { warm_pool: 0 } });
});
afterAll(() => server.close());

function tray() {
  const calls: string[] = [];
  const clipboard: string[] = [];
  const template = trayMenuTemplate({
    serverUrl: server.url,
    windowKey: server.key,
    keys: server.core.keys,
    blocks: server.core.guards.failures,
    writeClipboard: (text) => clipboard.push(text),
    openWindow: () => calls.push('open'),
    quit: () => calls.push('quit'),
  });
  const click = (label: RegExp) => {
    const item = template.find((entry) => label.test(entry.label ?? ''));
    if (!item?.click) throw new Error(`no clickable item ${String(label)}`);
    (item.click as () => void)();
  };
  return { template, calls, clipboard, click };
}

const snippetParts = (snippet: string) =>
  /^export LIGHTCONE_BASE_URL=(\S+) TZAFON_API_KEY=(sk_\S+)$/.exec(snippet)?.slice(1);

describe('the tray menu', () => {
  it('offers opening the window, the SDK snippets and quitting, in that order', () => {
    const labels = tray().template.map((item: MenuItemConstructorOptions) =>
      item.type === 'separator' ? '—' : item.label,
    );
    expect(labels).toEqual([
      'Open Benchtop',
      `Serving at ${server.url}`,
      '—',
      'Copy SDK Snippet (key valid until Benchtop quits)',
      'Copy SDK Snippet with a New Stored Key',
      'Lift IP Blocks',
      '—',
      'Quit Benchtop (ends every computer)',
    ]);
  });

  it('lifts every IP block, so a blocked address is served again', () => {
    const failures = server.core.guards.failures;
    const settings = server.core.settingsSource;
    const before = settings.current();
    settings.replace({ ...before, limits: { ...before.limits, auth_failures_before_block: 2 } });
    try {
      failures.record('10.0.0.9');
      failures.record('10.0.0.9');
      expect(failures.blocks().map((block) => block.ip)).toEqual(['10.0.0.9']);
      tray().click(/^Lift IP Blocks/);
      expect(failures.blocks()).toEqual([]);
      expect(failures.blockedFor('10.0.0.9')).toBe(0);
    } finally {
      settings.replace(before);
    }
  });

  it('open and quit do what they say', () => {
    const { click, calls } = tray();
    click(/^Open/);
    click(/^Quit/);
    expect(calls).toEqual(['open', 'quit']);
  });

  it("copies the window's own key, saying it lasts only while Benchtop runs", () => {
    const { click, clipboard } = tray();
    click(/until Benchtop quits/);
    expect(snippetParts(clipboard[0]!)).toEqual([server.url, server.key]);
  });

  it('copies a new stored key that the API accepts and the key list shows', async () => {
    const { click, clipboard } = tray();
    click(/New Stored Key/);
    const [baseUrl, key] = snippetParts(clipboard[0]!)!;
    expect(baseUrl).toBe(server.url);
    expect(key).not.toBe(server.key);
    const answer = await server.request('GET', '/computers', undefined, { key });
    expect(answer.status).toBe(200);
    expect(server.core.keys.list().some((info) => key!.startsWith(info.prefix))).toBe(true);
  });
});
