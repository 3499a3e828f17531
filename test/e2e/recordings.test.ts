import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/shared/approvals.js';
import type { RecordedEvent, Recording } from '../../src/shared/recordings.js';
import { readZip } from '../helpers/bundle-fixture.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { pageState } from '../helpers/page-state.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, saveScreenshots, UiPages } from '../helpers/ui-browser.js';

/** The Recordings view and the task page's video at /ui/ in real Chromium (out/renderer built). */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-rec-ui-scripts-'));
function script(name: string, delayMs: number, turns: unknown[]): string {
  const path = join(scripts, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
  return path;
}
const MODELS = {
  default: 'typist',
  providers: {
    typist: {
      provider: 'scripted' as const,
      script: script('typist', 300, [
        { output: [{ type: 'computer_call', action: { type: 'click', x: 500, y: 150 } }] },
        { output: [{ type: 'computer_call', action: { type: 'type', text: 'hi' } }] },
        { output: [{ type: 'computer_call', action: { type: 'wait', ms: 800 } }] },
        { output: [{ type: 'message', text: 'Typed hi.' }] },
      ]),
    },
    // On colors.html: a click paints the page red, the key b blue; a step every 300 ms.
    painter: {
      provider: 'scripted' as const,
      script: script('painter', 300, [
        { output: [{ type: 'computer_call', action: { type: 'click', x: 101, y: 101 } }] },
        { output: [{ type: 'computer_call', action: { type: 'keypress', keys: ['b'] } }] },
        { output: [{ type: 'computer_call', action: { type: 'click', x: 202, y: 202 } }] },
        { output: [{ type: 'computer_call', action: { type: 'keypress', keys: ['b'] } }] },
        { output: [{ type: 'message', text: 'Painted.' }] },
      ]),
    },
    // Slow enough that its page is open while it runs.
    slowpoke: {
      provider: 'scripted' as const,
      script: script('slowpoke', 2500, [
        { output: [{ type: 'computer_call', action: { type: 'click', x: 150, y: 130 } }] },
        { output: [{ type: 'computer_call', action: { type: 'wait', ms: 500 } }] },
        { output: [{ type: 'message', text: 'Done.' }] },
      ]),
    },
  },
};

let fixtures: FixtureServer;
let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ models: MODELS });
  browser = await launchUiBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fixtures?.close();
  rmSync(scripts, { recursive: true, force: true });
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const open = (route: string): Promise<Page> => pages.open(route);

/** A computer showing the actions fixture, ready for clicks. */
async function computerOnFixture(): Promise<string> {
  const id = (await server.request('POST', '/computers', {})).body.id as string;
  await server.request('POST', `/computers/${id}/navigate`, {
    url: `${fixtures.url}/actions.html`,
  });
  return id;
}

/** Ends the computer and waits until its recording is complete with its video. */
async function endAndRecord(id: string): Promise<Recording> {
  expect((await server.request('DELETE', `/computers/${id}`)).status).toBe(204);
  let recording: Recording | undefined;
  try {
    // The video is encoded as the computer ends: slow on a loaded two-core machine.
    await eventually(async () => {
      recording = (await server.request<Recording>('GET', `/computers/${id}/recording`)).body;
      return (
        recording.status === 'complete' &&
        recording.files.some((file) => file.name === 'video.webm')
      );
    }, 60_000);
  } catch (error) {
    throw new Error(`the recording stays ${JSON.stringify(recording)}`, { cause: error });
  }
  return recording!;
}

/** Waits until the task is over; fails naming where it stands. */
async function taskEnds(taskId: string, status: string): Promise<void> {
  let last: unknown;
  try {
    await eventually(async () => {
      last = (await server.request('GET', `/agent/tasks/${taskId}`)).body;
      return (last as { status: string }).status === status;
    }, 60_000);
  } catch (error) {
    throw new Error(`the task stays ${JSON.stringify(last)}`, { cause: error });
  }
}

async function recordedEvents(id: string): Promise<RecordedEvent[]> {
  const answer = await server.request('GET', `/computers/${id}/recording/events`);
  return answer.text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordedEvent);
}

/** The video's duration once its metadata is in (waits for it). */
const videoDuration = (video: Locator) =>
  video.evaluate(
    (element: HTMLVideoElement) =>
      new Promise<number>((resolve) => {
        if (element.readyState >= 1) resolve(element.duration);
        else element.addEventListener('loadedmetadata', () => resolve(element.duration));
      }),
  );
/** Where the video stands once a seek in progress is done (waits for it). */
const shownAt = (video: Locator) =>
  video.evaluate(
    (element: HTMLVideoElement) =>
      new Promise<number>((resolve) => {
        if (!element.seeking) resolve(element.currentTime);
        else element.addEventListener('seeked', () => resolve(element.currentTime), { once: true });
      }),
  );

/** The color of the middle of the video's picture as drawn: white, red, blue or its RGB. */
const colorShown = (video: Locator) =>
  video.evaluate((element: HTMLVideoElement) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 8;
    const context = canvas.getContext('2d', { willReadFrequently: true })!;
    context.drawImage(element, 0, 0, 8, 8);
    const [r, g, b] = context.getImageData(4, 4, 1, 1).data;
    if (r! > 200 && g! > 200 && b! > 200) return 'white';
    if (r! > 150 && g! < 80 && b! < 80) return 'red';
    if (b! > 150 && r! < 80 && g! < 80) return 'blue';
    return `rgb(${r}, ${g}, ${b})`;
  });

/** Plays from the start and resolves with the position of the first frame shown after 0. */
const playsFromStart = (video: Locator) =>
  video.evaluate(async (element: HTMLVideoElement) => {
    element.currentTime = 0;
    const advanced = new Promise<number>((resolve) => {
      const check = () => {
        if (element.currentTime > 0) {
          element.removeEventListener('timeupdate', check);
          resolve(element.currentTime);
        }
      };
      element.addEventListener('timeupdate', check);
    });
    await element.play();
    const at = await advanced;
    element.pause();
    return at;
  });

/** The action's offset in the video (seconds), from the recording's own events. */
function offsetOf(events: RecordedEvent[], startedAt: string, match: (action: any) => boolean) {
  const request = events.find((event) => event.type === 'action_request' && match(event.action));
  expect(request, 'the recording holds the action').toBeDefined();
  return (Date.parse(request!.timestamp) - Date.parse(startedAt)) / 1000;
}

describe('the Recordings view', () => {
  it('plays a deleted computer’s video in place, seeks to an action, and downloads its files', async () => {
    const id = await computerOnFixture();
    // A person's click from the live view, then one an API caller sends.
    let page = await open(`#/computers/${id}`);
    const canvas = page.locator('.stage canvas');
    await eventually(
      async () => Number(await canvas.evaluate((c) => c.dataset.framesDrawn ?? 0)) >= 1,
      10_000,
    );
    const box = (await canvas.boundingBox())!;
    await page.mouse.click(box.x + (150.5 / 1280) * box.width, box.y + (130.5 / 720) * box.height);
    await eventually(async () =>
      (await pageState(server, id)).events.some((line) => line.startsWith('click ')),
    );
    expect(await pages.close(), 'the page logged errors').toEqual([]);
    await server.request('POST', `/computers/${id}/click`, { x: 500, y: 150 });
    await server.request('POST', `/computers/${id}/type`, { text: 'recorded' });
    const recording = await endAndRecord(id);
    const events = await recordedEvents(id);
    const personClick = events.find(
      (event) => event.type === 'action_request' && event.action.type === 'click',
    );
    expect(personClick, 'the live view’s click is marked as a person’s').toMatchObject({
      source: 'live_view',
    });

    page = await open('#/recordings');
    const row = page.locator(`tr[data-computer-id="${id}"]`);
    await row.waitFor();
    const cells = row.locator('td');
    expect(await cells.nth(1).innerText()).toBe('browser');
    expect(await cells.nth(2).innerText()).toBe('complete');
    expect(await cells.nth(4).innerText()).toMatch(/^\d+:\d\d$/);
    await row.getByRole('link', { name: id }).click();
    await page.waitForURL(new RegExp(`#/recordings/${id}$`));

    const detail = page.locator('.recording-detail');
    const video = detail.locator('video');
    const duration = await videoDuration(video);
    expect(duration).toBeGreaterThan(0);
    expect(Number.isFinite(duration)).toBe(true);
    expect(duration * 1000).toBeCloseTo(recording.duration_ms!, -3);

    const actions = detail.getByRole('list', { name: 'Actions' });
    const fromView = actions.getByRole('button', { name: /click at 150, 130/ });
    expect(await fromView.locator('.badge').innerText()).toBe('live view');
    const apiClick = actions.getByRole('button', { name: /click at 500, 150/ });
    expect(await apiClick.locator('.badge').count()).toBe(0);
    await actions.getByRole('button', { name: /type “recorded”/ }).waitFor();
    // Its last line says how it ended (its tabs closing as it did are not lines of their own).
    const lines = actions.locator('.mark-text');
    await lines
      .last()
      .filter({ hasText: `ended: it was ended by node (key ${server.key.slice(0, 7)}…) (deleted)` })
      .waitFor();
    expect(await lines.filter({ hasText: 'tab closed' }).count()).toBe(0);

    // Reads of the computer (the HTML the test looked at) are listed only on request.
    const html = actions.locator('.mark-text', { hasText: /^html$/ });
    expect(await html.count()).toBe(0);
    await detail.getByLabel(/^Show \d+ reads?\b/).check();
    await html.first().waitFor();
    await detail.getByLabel(/^Show \d+ reads?\b/).uncheck();

    // A click on an action shows its moment, and marks it as the one on screen.
    const expected = offsetOf(events, recording.started_at!, (a) => a.at?.x === 500);
    await apiClick.click();
    expect(await shownAt(video)).toBeCloseTo(Math.min(expected, duration), 2);
    const playing = page.locator('.recorded-actions [aria-current="true"]');
    await playing.filter({ hasText: 'click at 500, 150' }).waitFor();
    expect(await playsFromStart(video)).toBeGreaterThan(0);
    await fromView.click();
    await shownAt(video);
    await playing.filter({ hasText: 'click at 150, 130' }).waitFor();
    await saveScreenshots(page, 'recordings');

    const download = page.waitForEvent('download');
    await detail.getByRole('button', { name: 'Download events.ndjson' }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe(`${id}-events.ndjson`);
    const text = readFileSync((await saved.path())!, 'utf8');
    expect(text.split('\n').filter(Boolean).length).toBe(events.length);
  }, 150_000);
});

describe('the Recordings view, for a computer driven without actions', () => {
  it('lists where a CDP client took its page, and the wait for a person on a held click', async () => {
    const made = await server.request('POST', '/computers', { cdp: true });
    const id = made.body.id as string;
    const cdp = await chromium.connectOverCDP(made.body.cdp_url as string);
    await cdp.contexts()[0]!.pages()[0]!.goto(`${fixtures.url}/checkout.html`);
    await cdp.close();
    const policies = await server.request('PUT', '/policies', [
      {
        id: 'payments',
        description: 'Paying needs a person',
        when: { action_types: ['click'], target: { role: 'button', name_pattern: '^Pay' } },
        then: 'ask',
      },
    ]);
    expect(policies.status, policies.text).toBe(200);
    try {
      const click = server.request('POST', `/computers/${id}/click`, { x: 100, y: 60 });
      const approval = await eventually(async () =>
        (await server.request<Approval[]>('GET', '/approvals?status=pending')).body.find(
          (pending) => pending.computer_id === id,
        ),
      );
      await sleep(1100);
      await server.request('POST', `/approvals/${approval.id}/approve`, {});
      expect((await click).body.status).toBe('success');
    } finally {
      await server.request('PUT', '/policies', []);
    }
    await endAndRecord(id);

    const page = await open(`#/recordings/${id}`);
    const detail = page.locator('.recording-detail');
    const lines = detail.getByRole('list', { name: 'Actions' });
    const went = lines.getByRole('button', { name: `page went to ${fixtures.url}/checkout.html` });
    expect(await went.locator('.badge').innerText()).toBe('page');
    const held = lines.getByRole('button', {
      name: /held click at 100, 60 for a person: .+ \(approved after [1-9]\d* s\)/,
    });
    expect(await held.locator('.badge').innerText()).toBe('approval');
    await lines.getByRole('button', { name: /^\S+ click at 100, 60$/ }).waitFor();
    // The header counts the actions sent; the page's own changes are not among them.
    expect(await detail.locator('.player-side h3').innerText()).toMatch(
      /^Actions 1 · 0 from the live\s+view$/,
    );
    await saveScreenshots(page, 'recording-page-changes');
  }, 120_000);
});

describe('the task page', () => {
  it('plays the task’s video beside its timeline, seeks to a step, and downloads the bundle', async () => {
    const computer = await computerOnFixture();
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Type hi into the field',
      model: 'typist',
      computer_id: computer,
    });
    const taskId = started.body.task_id as string;
    await taskEnds(taskId, 'completed');
    const recording = await endAndRecord(computer);
    expect(recording.task_ids).toContain(taskId);

    const page = await open(`#/tasks/${taskId}`);
    await page.getByText('Result: Typed hi.').waitFor();
    const video = page.locator('.task-video video');
    const duration = await videoDuration(video);
    expect(duration).toBeGreaterThan(0);

    // Step 2 began with the screenshot taken after the click: the video seeks to that moment.
    const shot = server.core.tasks
      .events('local', taskId)
      .find((event) => event.type === 'screenshot' && event.step === 2);
    expect(shot, 'step 2 has a screenshot event').toBeDefined();
    const expected = (Date.parse(shot!.timestamp) - Date.parse(recording.started_at!)) / 1000;
    const step = page.locator('li.step[data-step="2"]');
    await step.getByRole('button', { name: /^Step 2/ }).click();
    expect(await shownAt(video)).toBeCloseTo(Math.min(expected, duration), 2);
    await page.locator('li.step[data-step="2"][aria-current="step"]').waitFor();
    // Played, the highlight follows the video to the last step.
    expect(await playsFromStart(video)).toBeGreaterThan(0);
    await step.getByRole('button', { name: /^Step 2/ }).click();
    await shownAt(video);
    await saveScreenshots(page, 'task-video');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Download the bundle of ${taskId}` }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe(`${taskId}-bundle.zip`);
    const entries = await readZip(readFileSync((await saved.path())!));
    for (const name of ['index.html', 'task.json', 'events.ndjson', 'video.webm']) {
      expect([...entries.keys()]).toContain(name);
    }
  }, 150_000);

  it('shows at each step the screen the model was shown', async () => {
    // A still screen for a while, then a new one every step: each lasts far less than the video's
    // average frame, the length a player gives a frame whose own the video does not tell.
    const computer = (await server.request('POST', '/computers', {})).body.id as string;
    await server.request('POST', `/computers/${computer}/navigate`, {
      url: `${fixtures.url}/colors.html`,
    });
    await sleep(3000);
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Paint the page',
      model: 'painter',
      computer_id: computer,
      // Red and blue alternate, as an agent going in circles would.
      stall_detection: false,
    });
    const taskId = started.body.task_id as string;
    await taskEnds(taskId, 'completed');
    await sleep(2000);
    await endAndRecord(computer);

    const page = await open(`#/tasks/${taskId}`);
    await page.getByText('Result: Painted.').waitFor();
    const video = page.locator('.task-video video');
    await videoDuration(video);
    const shown = ['white', 'red', 'blue', 'red', 'blue'];
    for (const [index, expected] of shown.entries()) {
      const step = index + 1;
      await page
        .locator(`li.step[data-step="${step}"]`)
        .getByRole('button', { name: new RegExp(`^Step ${step}`) })
        .click();
      await shownAt(video);
      let seen = '';
      await eventually(async () => (seen = await colorShown(video)) === expected, 3000).catch(
        () => undefined,
      );
      expect(seen, `the screen shown at step ${step}`).toBe(expected);
      if (step === 2) await saveScreenshots(page, 'task-video-step');
    }
  }, 150_000);

  it('shows a running computer’s video up to the task’s end once the task is over', async () => {
    const computer = await computerOnFixture();
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Click the target',
      model: 'slowpoke',
      computer_id: computer,
    });
    const taskId = started.body.task_id as string;
    const page = await open(`#/tasks/${taskId}`);
    await page.locator('.screen-head .status-running').waitFor();
    const video = page.locator('.task-video video');
    await videoDuration(video);
    await page.locator('.screen-head .status-completed').waitFor({ timeout: 60_000 });
    const completed = server.core.tasks
      .events('local', taskId)
      .find((event) => event.type === 'completed')!;
    const recording = (await server.request<Recording>('GET', `/computers/${computer}/recording`))
      .body;
    expect(recording.status, 'its computer still runs').toBe('recording');
    const taskEnd = (Date.parse(completed.timestamp) - Date.parse(recording.started_at!)) / 1000;
    // Read again once the task was over, the video reaches its end (to a frame).
    await eventually(async () => (await videoDuration(video)) >= taskEnd - 0.1, 30_000);
    // Ended under the open page, a poll of its recording in flight answers 404.
    expect(await pages.close(), 'the page logged errors').toEqual([]);
    await server.request('DELETE', `/computers/${computer}`);
  }, 150_000);
});
