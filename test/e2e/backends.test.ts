import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/shared/backends.js';
import type { Computer } from '../../src/shared/computers.js';
import {
  chromiumPath,
  startPlaywrightServer,
  type PlaywrightServer,
} from '../helpers/remote-browsers.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, saveScreenshots, UiPages } from '../helpers/ui-browser.js';

/**
 * Browsers on other machines, by hand at /ui/ in real Chromium against the real server and a real
 * `playwright run-server`: the settings screen adds the server, Sessions says where each computer
 * runs and when a backend is down, and a computer lost with it says why it ended.
 */

const SLOW = 120_000;

let pw: PlaywrightServer;
let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));

beforeAll(async () => {
  [pw, server, browser] = await Promise.all([
    startPlaywrightServer(),
    startTestServer({ browser: { warm_pool: 0 } }),
    launchUiBrowser(),
  ]);
}, SLOW);
afterAll(async () => {
  await pw?.close();
  await browser?.close();
  await server?.close();
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const open = (route: string): Promise<Page> => pages.open(route);

const backends = async () => (await server.request<Backend[]>('GET', '/backends')).body;

describe('where browsers run, in the window', () => {
  it(
    'adds a Playwright server in settings, shows where computers run, and says when it is lost',
    async () => {
      let page = await open('#/settings');
      const section = page.locator('form[aria-labelledby="backends-title"]');
      await section.locator('tr[data-backend="local"]').waitFor();
      // Until any other machine is listed, Sessions says nothing about backends.
      const add = section.locator('fieldset.add-backend');
      await add.getByLabel('Name').fill('pw-1');
      await add.getByLabel('Address').fill('http://127.0.0.1:1');
      await add.getByText(/needs a url like ws:\/\//).waitFor();
      expect(await add.getByRole('button', { name: 'Add' }).isDisabled()).toBe(true);
      await add.getByLabel('Address').fill(pw.url);
      await add.getByLabel(/Chromium on that machine/).fill(chromiumPath());
      await add.getByRole('button', { name: 'Add' }).click();
      const row = section.locator('tr[data-backend="pw-1"]');
      await row.getByText('not saved yet').waitFor();
      await row.getByLabel('Max computers on pw-1').fill('2');
      // This machine takes one: the first computer goes to the server (two free places against
      // one), the second here (one each, and local is listed first).
      await section.getByLabel('Max computers on local').fill('1');
      await section.getByRole('button', { name: 'Save backends' }).click();
      await section.getByText('Saved.').waitFor();
      // Applied at once: the server is checked and shows up, with nothing on it yet.
      await row.getByText('up').waitFor({ timeout: SLOW });
      expect(await row.innerText()).toContain('0 running');
      expect((await backends()).map((b) => [b.name, b.capacity])).toEqual([
        ['local', 1],
        ['pw-1', 2],
      ]);
      await saveScreenshots(page, 'settings-backends');

      const placed: Computer[] = [];
      for (let i = 0; i < 2; i++) {
        const made = await server.request<Computer>('POST', '/computers', {});
        expect(made.status, made.text).toBe(200);
        placed.push(made.body);
      }
      expect(placed.map((computer) => computer.backend)).toEqual(['pw-1', 'local']);
      const remote = placed[0]!;

      page = await open('#/sessions');
      const line = page.locator('.backends-line');
      await line.locator('[data-backend="pw-1"]', { hasText: '1 of 2' }).waitFor();
      await line.locator('[data-backend="local"]', { hasText: '1 of 1' }).waitFor();
      const runsOn = (id: string) =>
        page.locator(`tr[data-computer-id="${id}"] td`).nth(2).innerText();
      expect(await page.locator('th', { hasText: 'Runs on' }).count()).toBe(1);
      await eventually(async () => (await runsOn(remote.id)) === 'pw-1');
      expect(await runsOn(placed[1]!.id)).toBe('local');
      await saveScreenshots(page, 'sessions-backends');

      // The server goes away: its computer ends, and the window says so and why.
      await pw.kill();
      await line.locator('[data-backend="pw-1"]', { hasText: 'down' }).waitFor({ timeout: SLOW });
      await page.locator(`tr[data-computer-id="${remote.id}"]`).waitFor({ state: 'detached' });
      page = await open(`#/computers/${remote.id}`);
      await page.getByText('its browser backend stopped answering (backend_lost)').waitFor();
      expect(await page.locator('.facts').innerText()).toContain('on pw-1');
      // While another machine is listed, a computer here says so too.
      page = await open(`#/computers/${placed[1]!.id}`);
      await page.locator('.facts', { hasText: 'on local' }).waitFor();
      page = await open(`#/computers/${remote.id}`);
      await page.getByRole('link', { name: 'See its recording' }).click();
      await page.waitForURL(new RegExp(`#/recordings/${remote.id}$`));
      const actions = page.getByRole('list', { name: 'Actions' });
      await actions
        .locator('.mark-text')
        .last()
        .filter({ hasText: 'ended: its browser backend stopped answering' })
        .waitFor({ timeout: SLOW });

      await server.request('DELETE', `/computers/${placed[1]!.id}`);
    },
    SLOW * 2,
  );

  it('names no backend on a computer page while browsers run on this machine alone', async () => {
    // This machine's backend renamed: still this machine, as Sessions has it.
    const saved = await server.request('PATCH', '/settings', {
      browser: { backends: [{ name: 'here', type: 'local' }] },
    });
    expect(saved.status, saved.text).toBe(200);
    const made = await server.request<Computer>('POST', '/computers', {});
    expect(made.body.backend, made.text).toBe('here');
    const page = await open(`#/computers/${made.body.id}`);
    const facts = page.locator('.facts');
    await facts.getByText('running').waitFor();
    expect(await facts.innerText()).not.toContain('on here');
    // Ended once the page is closed: ended under it, a poll of its tabs in flight answers 404,
    // which Chromium logs as a failed load (CI, 307f71a).
    expect(await pages.close(), 'the page logged errors').toEqual([]);
    await server.request('DELETE', `/computers/${made.body.id}`);
  });
});
