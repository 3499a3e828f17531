import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, saveScreenshots, UiPages } from '../helpers/ui-browser.js';

/**
 * The Tasks screen with more tasks than one answer of GET /agent/tasks holds (the newest 100):
 * a live task started before them is still listed, and older tasks come on request.
 */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-tasks-list-'));
const script = (name: string, body: unknown) => {
  const path = join(scripts, `${name}.json`);
  writeFileSync(path, JSON.stringify(body));
  return { provider: 'scripted' as const, script: path };
};

let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));

beforeAll(async () => {
  server = await startTestServer({
    models: {
      default: 'quick',
      providers: {
        // Says it is done at its first call.
        quick: script('quick', { turns: [] }),
        // Thinks for a minute: it is still live when the others are done.
        slow: script('slow', { delay_ms: 60_000, turns: [] }),
      },
    },
    recording: { enabled: false },
  });
  browser = await launchUiBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(scripts, { recursive: true, force: true });
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const start = async (body: Record<string, unknown>): Promise<string> => {
  const started = await server.request('POST', '/agent/tasks', body);
  expect(started.status, started.text).toBe(200);
  return started.body.task_id as string;
};

describe('the Tasks screen', () => {
  it('lists a live task however many newer ones finished, and older tasks on request', async () => {
    const long = await start({ instruction: 'Think for a long time', model: 'slow' });
    const computer = (await server.request('POST', '/computers', {})).body.id as string;
    let first = '';
    for (let n = 0; n < 101; n++) {
      const id = await start({ instruction: `Quick task ${n}`, computer_id: computer });
      first ||= id;
      await eventually(
        async () => (await server.request('GET', `/agent/tasks/${id}`)).body.status === 'completed',
        10_000,
      );
    }
    const page = await pages.open('#/tasks');
    const table = page.locator('table.task-table');
    await table.locator(`tr[data-task-id="${long}"]`).waitFor();
    expect(await table.locator('tbody').first().locator('tr[data-task-id]').count()).toBe(1);
    // The newest 100 (all finished: the live one is older than them), and a way to the oldest.
    expect(await table.locator('tbody').nth(1).locator('tr[data-task-id]').count()).toBe(100);
    expect(await table.locator(`tr[data-task-id="${first}"]`).count()).toBe(0);
    await page.getByText('The newest 100 tasks.').waitFor();
    await saveScreenshots(page, 'tasks-many');
    await page.getByRole('button', { name: 'Show older tasks' }).click();
    await table.locator(`tr[data-task-id="${first}"]`).waitFor();
    expect(await table.locator('tbody').nth(1).locator('tr[data-task-id]').count()).toBe(101);
    expect(await page.getByRole('button', { name: 'Show older tasks' }).count()).toBe(0);
    await server.request('POST', `/agent/tasks/${long}/cancel`);
  }, 120_000);
});
