import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentTurns,
  BROWSER_TASKS,
  healTurns,
  startFormPages,
  writeScript,
} from '../helpers/replay-fixtures.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, openUi, saveScreenshots, type UiPage } from '../helpers/ui-browser.js';

/**
 * Replays in the window (out/renderer must be built): a finished task's page has a Replay
 * button; the replay opens on its own page, says which task it repeats, and its timeline shows
 * the step the model healed.
 */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-replay-ui-'));
const form = BROWSER_TASKS[1]!;
let pages: Awaited<ReturnType<typeof startFormPages>>;
let server: TestServer;
let browser: Browser;
let ui: UiPage | undefined;

beforeAll(async () => {
  pages = await startFormPages([form]);
  const script = writeScript(scripts, 'form', agentTurns(form, pages.url));
  server = await startTestServer({
    models: { default: 'form', providers: { form: { provider: 'scripted', script } } },
    recording: { enabled: false },
  });
  browser = await launchUiBrowser();
});
afterAll(async () => {
  await ui?.close();
  await browser?.close();
  await server?.close();
  await pages?.close();
});

describe('the task page', () => {
  it('replays a finished task and shows the step the model healed', async () => {
    const started = await server.request('POST', '/agent/tasks', {
      instruction: `Send "${form.text}" with the form`,
    });
    const original = started.body.task_id as string;
    await eventually(async () => {
      const task = (await server.request('GET', `/agent/tasks/${original}`)).body;
      return task.status === 'completed';
    }, 60_000);
    // The field is renamed since; the model, asked once, clicks it where it is.
    pages.changed.add(form.name);
    writeScript(scripts, 'form', healTurns(form));

    ui = await openUi(browser, server, `#/tasks/${original}`);
    const { page } = ui;
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText(`Replays ${original} without the model`).waitFor();
    const replay = decodeURIComponent(page.url().split('#/tasks/')[1]!);
    expect(replay).toMatch(/^task_/);
    expect(replay).not.toBe(original);
    const healed = page.locator('.event-healed');
    await healed.waitFor({ timeout: 60_000 });
    expect(await healed.textContent()).toMatch(
      /healed.*click at \d+, \d+ → click at \d+, \d+ \(under the point is text field "Full name", the run had text field "Name"\)/,
    );
    await page.locator('.event-completed').waitFor({ timeout: 60_000 });
    // Each replayed step has its own entry, the healed one among them.
    const steps = page.getByRole('list', { name: 'Steps' }).locator(':scope > li');
    expect(await steps.evaluateAll((items) => items.map((item) => item.dataset.step))).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
    ]);
    expect(await steps.nth(2).locator('.event-healed').count()).toBe(1);
    await page.getByRole('button', { name: 'Python script' }).waitFor();
    await saveScreenshots(page, 'task-replay');
    expect(ui.errors).toEqual([]);

    // The healed replay, replayed: no model call at all, and no look at the screen to show.
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText(`Replays ${replay} without the model`).waitFor();
    await page.locator('.event-completed').waitFor({ timeout: 60_000 });
    await page.getByText('No model call: a replay repeats the run without the model').waitFor();
    const again = page.getByRole('list', { name: 'Steps' }).locator(':scope > li');
    expect(await again.count()).toBe(5);
    // Each step's words take the whole card: no empty column kept for a screenshot.
    for (const step of await again.all()) {
      const card = (await step.boundingBox())!;
      const words = (await step.locator('.step-text').boundingBox())!;
      expect(words.width).toBeGreaterThan(card.width * 0.9);
    }
    await saveScreenshots(page, 'task-replay-again');
    expect(ui.errors).toEqual([]);
  }, 180_000);
});
