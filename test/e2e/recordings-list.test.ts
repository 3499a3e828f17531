import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, UiPages } from '../helpers/ui-browser.js';

/**
 * The Recordings screen with more recordings than one answer of GET /recordings holds (the
 * newest 100): it says so, and shows older ones on request.
 */

let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));

beforeAll(async () => {
  server = await startTestServer({});
  browser = await launchUiBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

describe('the Recordings screen', () => {
  it('says it lists the newest 100 recordings, and shows older ones on request', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 101; n++) {
      const created = await server.request('POST', '/computers', {});
      expect(created.status, created.text).toBe(200);
      ids.push(created.body.id as string);
      expect((await server.request('DELETE', `/computers/${ids[n]}`)).status).toBe(204);
    }
    const page = await pages.open('#/recordings');
    const rows = page.locator('table.recording-table tbody tr');
    await page.getByText('The newest 100 recordings.').waitFor();
    expect(await rows.count()).toBe(100);
    expect(await page.locator(`tr[data-computer-id="${ids[0]}"]`).count()).toBe(0);
    await page.getByRole('button', { name: 'Show older recordings' }).click();
    await page.locator(`tr[data-computer-id="${ids[0]}"]`).waitFor();
    expect(await rows.count()).toBe(101);
    expect(await page.getByRole('button', { name: 'Show older recordings' }).count()).toBe(0);
  }, 120_000);
});
