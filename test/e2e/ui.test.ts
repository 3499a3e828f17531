import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { readWorkspaceFile } from '../helpers/desktop.js';
import { pageState, type FixtureState } from '../helpers/page-state.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  launchUiBrowser,
  saveScreenshots,
  screenshotPath,
  VIEWPORTS,
  UiPages,
  type Viewport,
} from '../helpers/ui-browser.js';

/** The window's UI at /ui/ in real Chromium, against the real server (out/renderer must be built). */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-ui-scripts-'));
function script(name: string, delayMs: number, turns: unknown[]): string {
  const path = join(scripts, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
  return path;
}
const MODELS = {
  default: 'typist',
  providers: {
    // Slow enough to pause during its first model call. A pause then drops that turn's actions
    // (the task resumes from a fresh screenshot), so the first turn only waits.
    typist: {
      provider: 'scripted' as const,
      script: script('typist', 2500, [
        { output: [{ type: 'computer_call', action: { type: 'wait', ms: 0 } }] },
        {
          output: [
            { type: 'reasoning', text: 'The field is on the right of the blue box.' },
            { type: 'computer_call', action: { type: 'click', x: 500, y: 150 } },
          ],
        },
        { output: [{ type: 'computer_call', action: { type: 'type', text: 'hi' } }] },
        { output: [{ type: 'message', text: 'Typed hi.' }] },
      ]),
    },
    waiter: {
      provider: 'scripted' as const,
      script: script(
        'waiter',
        500,
        Array.from({ length: 40 }, () => ({
          output: [{ type: 'computer_call', action: { type: 'wait', ms: 0 } }],
        })),
      ),
    },
    // Stays running for minutes unless cancelled: a task an SDK started and left to run.
    idler: {
      provider: 'scripted' as const,
      script: script(
        'idler',
        2000,
        Array.from({ length: 50 }, () => ({
          output: [{ type: 'computer_call', action: { type: 'wait', ms: 0 } }],
        })),
      ),
    },
  },
};

let fixtures: FixtureServer;
let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));
const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-ui-data-'));

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ models: MODELS }, { dataDir });
  browser = await launchUiBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fixtures?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(scripts, { recursive: true, force: true });
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const open = (route?: string, viewport?: Viewport): Promise<Page> => pages.open(route, viewport);

const framesDrawn = (page: Page) =>
  page.locator('.stage canvas').evaluate((canvas) => Number(canvas.dataset.framesDrawn ?? 0));
const framesReceived = (page: Page) =>
  page.locator('.stage canvas').evaluate((canvas) => Number(canvas.dataset.framesReceived ?? 0));

/** The viewport point of the live view that shows the computer's pixel (x, y). */
async function viewPoint(
  page: Page,
  computer: { width: number; height: number },
  x: number,
  y: number,
) {
  const box = (await page.locator('.stage canvas').boundingBox())!;
  return {
    x: box.x + ((x + 0.5) / computer.width) * box.width,
    y: box.y + ((y + 0.5) / computer.height) * box.height,
  };
}

/** Waits until the fixture page shows what the check wants; fails showing what it shows. */
async function pageShows(computerId: string, check: (state: FixtureState) => boolean) {
  let last: FixtureState | undefined;
  try {
    await eventually(async () => check((last = await pageState(server, computerId))), 15_000);
  } catch (error) {
    throw new Error(`the page shows ${JSON.stringify(last)}`, { cause: error });
  }
  return last!;
}

/** Waits for the page's Downloads to offer invoice.csv, saves it, and checks the bytes saved. */
async function savesTheInvoice(page: Page, screenshot: string): Promise<void> {
  const save = page
    .getByRole('group', { name: 'Downloads' })
    .getByRole('button', { name: 'Save invoice.csv' });
  await save.waitFor();
  await page.screenshot({ path: screenshotPath(screenshot) });
  const [download] = await Promise.all([page.waitForEvent('download'), save.click()]);
  expect(download.suggestedFilename()).toBe('invoice.csv');
  expect(await readFile(await download.path())).toEqual(
    await readFile(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv')),
  );
}

async function computerIdOf(page: Page): Promise<string> {
  await page.waitForURL(/#\/computers\/comp_/);
  return decodeURIComponent(/#\/computers\/([^/]+)/.exec(page.url())![1]!);
}

describe('sessions and the live view', () => {
  let computerId: string;
  const display = { width: 1280, height: 720 };

  it('creates a browser computer from the Sessions screen and shows its frames', async () => {
    const page = await open();
    expect(page.url(), 'the key leaves the address bar').not.toContain('key=');
    await page.getByLabel('Width').fill(String(display.width));
    await page.getByLabel('Height').fill(String(display.height));
    await page.getByRole('button', { name: 'Create computer' }).click();
    computerId = await computerIdOf(page);
    await eventually(async () => (await framesDrawn(page)) >= 1, 10_000);
    await page.getByText(/^live · \d+ fps$/).waitFor();

    await page.evaluate(() => (location.hash = '#/sessions'));
    const row = page.locator(`tr[data-computer-id="${computerId}"]`);
    await row.waitFor();
    const cells = row.locator('td');
    expect(await cells.nth(1).innerText()).toBe('browser');
    expect(await cells.nth(2).innerText()).toBe('running');
    expect(await cells.nth(3).innerText()).toBe('1280×720');
    expect(await cells.nth(5).innerText()).toMatch(/^[12]:\d\d$/);
    await eventually(async () => (await cells.nth(6).innerText()) === '1', 5000);
    await saveScreenshots(page, 'sessions');
  });

  it('clicks, right-clicks, scrolls and types on the computer at the pixel shown', async () => {
    // At 1920×1080 the 1280×720 view is shown at least at full size: every pixel can be hit.
    const page = await open(`#/computers/${computerId}`, VIEWPORTS[1]);
    await page.getByLabel('Address').fill(`${fixtures.url}/actions.html`);
    await page.getByRole('button', { name: 'Go' }).click();
    await page
      .getByRole('button', { name: 'Switch to tab Actions fixture' })
      .waitFor()
      .catch(async (error: unknown) => {
        // Seen in clean-clone CI, not alone: what the window and the API showed instead.
        const bar = await page
          .locator('.tabs-bar')
          .innerText()
          .catch(() => '(none)');
        const address = await page
          .getByLabel('Address')
          .inputValue()
          .catch(() => '(none)');
        const tabs = await server.request('GET', `/computers/${computerId}/tabs`);
        throw new Error(
          `${String(error)}\nthe tab bar showed: ${bar}\naddress: ${address}\nGET tabs: ${tabs.text}`,
        );
      });
    const shown = (await page.locator('.stage canvas').boundingBox())!;
    expect(shown.width).toBeGreaterThanOrEqual(display.width);
    expect(shown.width / shown.height).toBeCloseTo(display.width / display.height, 2);
    const shows = (line: string) => pageShows(computerId, (state) => state.events.includes(line));

    const target = await viewPoint(page, display, 150, 130);
    await page.mouse.click(target.x, target.y);
    await shows('click 150,130 left detail=1 on target');

    const corner = await viewPoint(page, display, 250, 180);
    await page.mouse.click(corner.x, corner.y, { button: 'right' });
    await shows('contextmenu 250,180 right detail=0 on target');
    await page.mouse.dblclick(target.x, target.y);
    await shows('dblclick 150,130 left detail=2 on target');

    const field = await viewPoint(page, display, 500, 150);
    await page.mouse.click(field.x, field.y);
    await page.keyboard.type('Hello, World!');
    await page.keyboard.press('Backspace');
    await pageShows(computerId, (state) => state.typed === 'Hello, World');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Bye');
    await pageShows(computerId, (state) => state.typed === 'Bye');

    await page.mouse.move(target.x, target.y);
    await page.mouse.wheel(0, 240);
    await pageShows(computerId, (state) => state.scroll[1] >= 200);
    await page.mouse.wheel(0, -1000);
    await pageShows(computerId, (state) => state.scroll[1] === 0);

    // Scaled down to fit 1280×800, one screen pixel covers more than one of the computer's.
    await page.setViewportSize(VIEWPORTS[0]);
    expect((await page.locator('.stage canvas').boundingBox())!.width).toBeLessThan(display.width);
    const clicks = (state: FixtureState) =>
      state.events.filter((line) => line.startsWith('click '));
    const before = clicks(await pageState(server, computerId)).length;
    const scaled = await viewPoint(page, display, 200, 170);
    await page.mouse.click(scaled.x, scaled.y);
    const state = await pageShows(computerId, (now) => clicks(now).length > before);
    const match = /^click (\d+),(\d+) left detail=1 on target$/.exec(clicks(state).at(-1)!)!;
    const landed = [Number(match[1]), Number(match[2])] as const;
    expect(Math.abs(landed[0] - 200)).toBeLessThanOrEqual(1);
    expect(Math.abs(landed[1] - 170)).toBeLessThanOrEqual(1);
    await saveScreenshots(page, 'live-view');
  });

  it('keeps the screen where it is when a person starts driving, so a second click lands too', async () => {
    const page = await open(`#/computers/${computerId}`, VIEWPORTS[1]);
    await page.getByText('Nobody is driving.').waitFor();
    await eventually(async () => (await framesDrawn(page)) >= 1, 10_000);
    const before = (await page.locator('.stage canvas').boundingBox())!;
    const target = await viewPoint(page, display, 150, 130);
    const onTarget = (state: FixtureState) =>
      state.events.filter((line) => /^click 150,130 left detail=\d on target$/.test(line)).length;
    const clicked = onTarget(await pageState(server, computerId));

    await page.mouse.click(target.x, target.y);
    await page.getByText('You are driving.').waitFor();
    expect((await page.locator('.stage canvas').boundingBox())!).toEqual(before);
    // Where the person aimed before their first click, as they would click again at once.
    await page.mouse.click(target.x, target.y);
    await pageShows(computerId, (state) => onTarget(state) === clicked + 2);
    await saveScreenshots(page, 'live-view-person-driving');
  });

  it('draws the frames of an animated page as they arrive', async () => {
    await server.request('POST', `/computers/${computerId}/navigate`, {
      url: `${fixtures.url}/animated.html`,
    });
    const page = await open(`#/computers/${computerId}`);
    await eventually(async () => (await framesDrawn(page)) >= 10, 10_000);
    const [drawn, received] = [await framesDrawn(page), await framesReceived(page)];
    await page.waitForTimeout(3000);
    const fps = ((await framesDrawn(page)) - drawn) / 3;
    const arrived = ((await framesReceived(page)) - received) / 3;
    console.log(
      `live view at fps=30: ${fps.toFixed(1)} frames/s drawn of ${arrived.toFixed(1)} received`,
    );
    // The view keeps drawing what arrives; a frame that comes while another is drawn replaces
    // it (a loaded machine skips some). The frame rate itself is a bench row ("live view fps in
    // the UI"), where the machine's load is accounted for.
    expect(arrived).toBeGreaterThan(0);
    expect(fps).toBeGreaterThanOrEqual(arrived / 2);
  });

  it('keeps an address a person typed when the tab navigates meanwhile, until Go or Escape', async () => {
    const page = await open(`#/computers/${computerId}`);
    const address = page.getByLabel('Address');
    const navigate = async (name: string) => {
      await server.request('POST', `/computers/${computerId}/navigate`, {
        url: `${fixtures.url}/${name}`,
      });
    };
    await navigate('colors.html');
    await eventually(async () => (await address.inputValue()).endsWith('/colors.html'));
    // Typed, then the field left (as a click on Go leaves it) while an agent navigates.
    await address.fill(`${fixtures.url}/actions.html`);
    await address.blur();
    await navigate('product.html');
    await page.getByRole('button', { name: 'Switch to tab Product' }).waitFor();
    expect(await address.inputValue()).toBe(`${fixtures.url}/actions.html`);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByRole('button', { name: 'Switch to tab Actions fixture' }).waitFor();
    // Escape gives the field back to where the tab is.
    await address.fill('https://example.invalid/');
    await address.press('Escape');
    expect(await address.inputValue()).toBe(`${fixtures.url}/actions.html`);
  });

  it('keeps an address that did not load, for the person to mend, and says why', async () => {
    const page = await open(`#/computers/${computerId}`);
    const address = page.getByLabel('Address');
    await address.waitFor();
    // Typed as people type it (no scheme); a port browsers refuse, so it fails at once.
    await address.fill('127.0.0.1:1/typo');
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByText('net::ERR_UNSAFE_PORT at http://127.0.0.1:1/typo').waitFor();
    await page.getByRole('button', { name: 'Switch to tab Page not loaded' }).waitFor();
    expect(await address.inputValue()).toBe('127.0.0.1:1/typo');
    // Mended, it goes.
    await address.fill(`${fixtures.url}/colors.html`);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByRole('button', { name: 'Switch to tab Colors' }).waitFor();
    await eventually(async () => (await address.inputValue()) === `${fixtures.url}/colors.html`);
  });

  it('lists what the computer downloaded, and saves a file for the person', async () => {
    const page = await open(`#/computers/${computerId}`);
    await page.getByLabel('Address').waitFor();
    expect(await page.getByRole('group', { name: 'Downloads' }).count()).toBe(0);
    const act = (action: string, body: Record<string, unknown>) =>
      server.request('POST', `/computers/${computerId}/${action}`, body);
    expect((await act('navigate', { url: `${fixtures.url}/downloads.html` })).body.status).toBe(
      'success',
    );
    expect((await act('click', { x: 100, y: 40 })).body.status).toBe('success');
    await savesTheInvoice(page, 'live-view-downloads.png');
  });

  it('selects the whole address at the click that brings a person in, as a browser does', async () => {
    await server.request('POST', `/computers/${computerId}/navigate`, {
      url: `${fixtures.url}/colors.html`,
    });
    const page = await open(`#/computers/${computerId}`);
    const address = page.getByLabel('Address');
    await eventually(async () => (await address.inputValue()).endsWith('/colors.html'));
    const selected = () =>
      address.evaluate((input: HTMLInputElement) =>
        input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0),
      );
    // One click, then the new address typed: it replaces the old one.
    await address.click();
    expect(await selected()).toBe(`${fixtures.url}/colors.html`);
    await page.keyboard.type(`${fixtures.url}/product.html`);
    expect(await address.inputValue()).toBe(`${fixtures.url}/product.html`);
    await address.press('Enter');
    await page.getByRole('button', { name: 'Switch to tab Product' }).waitFor();
    // In the field already, a click places the caret (a person mending one letter).
    await eventually(async () => (await address.inputValue()).endsWith('/product.html'));
    await address.click({ position: { x: 30, y: 8 } });
    expect(await selected()).toBe('');
    // Coming in by a drag selects what was dragged over, not all.
    await address.blur();
    const box = (await address.boundingBox())!;
    await page.mouse.move(box.x + 10, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + 60, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const dragged = await selected();
    expect(dragged.length).toBeGreaterThan(0);
    expect(dragged.length).toBeLessThan(`${fixtures.url}/product.html`.length);
  });

  it('leaves the address alone while a person is in it, even when the tabs are listed then', async () => {
    const page = await open();
    // The live view, loaded afresh (no screen listed the tabs before it), has its first listing
    // of the tabs held until the person is in the address field.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/computers\/[^/]+\/tabs$/, async (route) => {
      await held;
      await route.continue();
    });
    await page.evaluate((hash) => (location.hash = hash), `#/computers/${computerId}`);
    await page.reload();
    const address = page.getByLabel('Address');
    await address.click();
    expect(await address.inputValue()).toBe('');
    release();
    await page.getByRole('button', { name: /^Switch to tab / }).waitFor();
    await page.keyboard.type(`${fixtures.url}/colors.html`);
    expect(await address.inputValue()).toBe(`${fixtures.url}/colors.html`);
    const navigate = (name: string) =>
      server.request('POST', `/computers/${computerId}/navigate`, {
        url: `${fixtures.url}/${name}`,
      });
    // Sent with Enter, the field keeps the focus, and shows where the tab goes from then on.
    await address.press('Enter');
    await page.getByRole('button', { name: 'Switch to tab Colors' }).waitFor();
    await navigate('product.html');
    await page.getByRole('button', { name: 'Switch to tab Product' }).waitFor();
    await eventually(async () => (await address.inputValue()).endsWith('/product.html'));
    // Clicked into again and left untouched while the tab navigates: it shows where the tab is
    // once left.
    await address.blur();
    await address.click();
    await navigate('actions.html');
    await page.getByRole('button', { name: 'Switch to tab Actions fixture' }).waitFor();
    expect(await address.inputValue()).toBe(`${fixtures.url}/product.html`);
    await address.blur();
    expect(await address.inputValue()).toBe(`${fixtures.url}/actions.html`);
  });

  it('marks an agent task driving, and a person taking over pauses it until handed back', async () => {
    await server.request('POST', `/computers/${computerId}/navigate`, {
      url: `${fixtures.url}/actions.html`,
    });
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'wait around',
      model: 'waiter',
      computer_id: computerId,
      // It waits again and again on purpose: not a stall to pause for.
      stall_detection: false,
    });
    const taskId = started.body.task_id as string;
    const status = async () => (await server.request('GET', `/agent/tasks/${taskId}`)).body.status;
    const page = await open(`#/computers/${computerId}`, VIEWPORTS[1]);
    await page.getByText(`Agent task ${taskId} is driving.`).waitFor();

    // Every height the banner takes from here on: it must not move the view under the pointer.
    const heights = await page.locator('.driver').evaluateHandle((banner) => {
      const seen: number[] = [banner.getBoundingClientRect().height];
      new ResizeObserver(() => seen.push(banner.getBoundingClientRect().height)).observe(banner);
      return seen;
    });
    const target = await viewPoint(page, display, 120, 120);
    await page.mouse.click(target.x, target.y);
    await page.getByText('You are driving.').waitFor();
    await eventually(async () => (await status()) === 'paused');
    await page.getByRole('button', { name: `Hand back to ${taskId}` }).waitFor();
    const seen = await heights.jsonValue();
    expect(new Set(seen), `the banner's heights: ${seen.join(', ')}`).toEqual(new Set([seen[0]]));
    await pageShows(computerId, (state) =>
      state.events.includes('click 120,120 left detail=1 on target'),
    );
    await saveScreenshots(page, 'live-view-taken-over');

    await page.getByRole('button', { name: `Hand back to ${taskId}` }).click();
    await eventually(async () => (await status()) === 'running');
    await page.getByText(`Agent task ${taskId} is driving.`).waitFor();
    await server.request('POST', `/agent/tasks/${taskId}/cancel`);
  });

  it('shows a computer its program ends while a person watches as ended, by whom, at once', async () => {
    const other = (await server.request('POST', '/computers', {})).body.id as string;
    await server.request('POST', `/computers/${other}/navigate`, {
      url: `${fixtures.url}/actions.html`,
    });
    const page = await open(`#/computers/${other}`);
    await eventually(async () => (await framesDrawn(page)) >= 1, 10_000);
    await page.locator('.tab-strip').getByText('Actions fixture').waitFor();
    // The agent's script ends, as SDK scripts do, with its computer deleted.
    const deleted = await server.request('DELETE', `/computers/${other}`, undefined, {
      headers: SDK_HEADERS.currentPython,
    });
    expect(deleted.status).toBe(204);
    await page
      .locator('.notice', {
        hasText: `This computer has ended: it was ended by Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`,
      })
      .waitFor();
    expect(await page.locator('.live, .tab-strip').count()).toBe(0);
    // Long enough for every poll the page had of the running computer to come round again.
    await page.waitForTimeout(2500);
    expect(await page.locator('[role="alert"]').count()).toBe(0);
    await saveScreenshots(page, 'computer-ended-under-view');
  });

  it('ends a computer from its own page and lands on Sessions without asking after it', async () => {
    const other = (await server.request('POST', '/computers', {})).body.id as string;
    const page = await open('#/sessions');
    await page.locator(`tr[data-computer-id="${other}"]`).waitFor();
    await page.evaluate((hash) => (location.hash = hash), `#/computers/${other}`);
    await eventually(async () => (await framesDrawn(page)) >= 1, 10_000);
    await page.locator('.screen-head').getByRole('button', { name: 'End' }).click();
    await page.waitForURL(/#\/sessions$/);
    await page.locator(`tr[data-computer-id="${other}"]`).waitFor({ state: 'detached' });
    // The screen counted the tabs of the computers running now, not of the one just ended
    // (its listing would answer 404, which Chromium logs: afterEach fails on any such line).
    await page.waitForTimeout(500);
    expect(pages.errors).toEqual([]);
  });

  it('ends the computer from the Sessions screen', async () => {
    const page = await open('#/sessions');
    await page.getByRole('button', { name: `End ${computerId}` }).click();
    await page.locator(`tr[data-computer-id="${computerId}"]`).waitFor({ state: 'detached' });
    const after = await server.request('GET', `/computers/${computerId}`);
    expect(after.body).toMatchObject({ status: 'terminated', termination_reason: 'deleted' });
    // Its own page says who ended it.
    await page.goto(`${page.url().split('#')[0]}#/computers/${computerId}`);
    await page
      .locator('.notice', {
        hasText: /it was ended by a person in the window \(key sk_\w+…\) \(deleted\)/,
      })
      .waitFor();
  });

  it('keeps what the ended computer downloaded on its recording page', async () => {
    const page = await open(`#/recordings/${computerId}`);
    await savesTheInvoice(page, 'recording-downloads.png');
  });
});

describe('tasks', () => {
  let taskId: string;

  it('starts a scripted task, pauses it, sends a message, resumes and watches it complete', async () => {
    const computer = (await server.request('POST', '/computers', {})).body.id as string;
    await server.request('POST', `/computers/${computer}/navigate`, {
      url: `${fixtures.url}/actions.html`,
    });
    const page = await open('#/tasks');
    await page.getByLabel('Instruction').fill('Type hi into the field');
    await page.getByLabel('Model').selectOption('typist');
    await page.getByLabel('Computer').selectOption(`computer:${computer}`);
    await page.getByRole('button', { name: 'Start task' }).click();
    await page.waitForURL(/#\/tasks\/task_/);
    taskId = decodeURIComponent(/#\/tasks\/([^/]+)/.exec(page.url())![1]!);

    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('.screen-head .status-paused').waitFor();
    await page.getByLabel('Message to the model').fill('Please type hi, then stop.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Please type hi, then stop.').waitFor();
    await page
      .locator('.paused-reason', { hasText: /^Paused by a person in the window/ })
      .waitFor();
    await saveScreenshots(page, 'task-paused');
    await page.getByRole('button', { name: 'Resume' }).click();

    await page.locator('.screen-head .status-completed').waitFor({ timeout: 20_000 });
    expect(await page.locator('.screen-head .facts').innerText()).toContain('exit code 0');
    await page.getByText('Result: Typed hi.').waitFor();
    await pageShows(computer, (state) => state.typed === 'hi');
    const timeline = page.locator('.timeline');
    await timeline.getByText('The field is on the right of the blue box.').waitFor();
    await timeline.getByText('click at 500, 150').waitFor();
    await timeline.getByText('type “hi”').first().waitFor();
    for (const kind of ['paused', 'message', 'resumed', 'completed']) {
      await timeline
        .locator('.event-kind', { hasText: new RegExp(`^${kind}$`) })
        .first()
        .waitFor();
    }
    // Each turn the person took says it was theirs.
    const theirs = 'a person in the window (key sk_';
    await timeline.getByText(`paused by ${theirs}`).waitFor();
    await timeline.getByText(`Please type hi, then stop. (from ${theirs}`).waitFor();
    await timeline.getByText(`by ${theirs}`).first().waitFor();
    // The click is drawn on its step's screenshot, at the pixel it clicked.
    const clickStep = timeline.locator('li.step', { hasText: 'click at 500, 150' });
    await clickStep.locator('img').evaluate((img: HTMLImageElement) => img.decode());
    const ring = clickStep.locator('circle.mark-ring');
    expect(await ring.getAttribute('cx')).toBe('500');
    expect(await ring.getAttribute('cy')).toBe('150');
    await saveScreenshots(page, 'task-completed');
  }, 60_000);

  it('lists the task again after Benchtop restarts on the same data dir', async () => {
    await server.close();
    server = await startTestServer({ models: MODELS }, { dataDir });
    const page = await open('#/tasks');
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await row.waitFor();
    const cells = row.locator('td');
    expect(await cells.nth(1).innerText()).toBe('completed');
    expect(await cells.nth(2).innerText()).toBe('0');
    expect(await cells.nth(3).innerText()).toBe('Type hi into the field');
    await saveScreenshots(page, 'tasks');
    await row.getByRole('link', { name: taskId }).click();
    await page.getByText('Result: Typed hi.').waitFor();
    await page.locator('.timeline').getByText('Typed hi.').first().waitFor();

    // Its computer did not outlive the restart: its page says so, and leads to what it left.
    const computerId = (await server.request('GET', `/agent/tasks/${taskId}`)).body.computer_id;
    await page.locator('.task-facts').getByRole('link', { name: computerId }).click();
    const notice = page.locator('.notice');
    await notice
      .getByText(`Benchtop holds no computer ${computerId}: an ended computer is kept for an hour`)
      .waitFor();
    await notice.getByText(`Its last task ${taskId} completed: Typed hi.`).waitFor();
    expect(await page.locator('.error').count()).toBe(0);
    await saveScreenshots(page, 'computer-gone');
    await notice.getByRole('link', { name: 'See its recording' }).click();
    await page.waitForURL(new RegExp(`#/recordings/${computerId}$`));
    // Chromium logs the computer's 404 itself (its record and its events stream), nothing else.
    expect(new Set(pages.errors)).toEqual(
      new Set([
        'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
      ]),
    );
    pages.errors.length = 0;
  }, 60_000);
});

describe('who drives what', () => {
  const instruction =
    'Find the cheapest flight from Lisbon to Oslo next Tuesday, compare the three airlines ' +
    'that fly it, and leave the booking page of the cheapest one open without paying';
  let driven: { taskId: string; computerId: string };
  let idle: { taskId: string; computerId: string };
  afterAll(async () => {
    if (driven) await server.request('POST', `/agent/tasks/${driven.taskId}/cancel`);
    for (const { computerId } of [driven, idle].filter(Boolean)) {
      await server.request('DELETE', `/computers/${computerId}`);
    }
  });

  it('shows on the Sessions screen the task an SDK started, its status and a link to it', async () => {
    // As an SDK starts one: a new browser computer for the task, nothing done in the window.
    // The idler waits again and again on purpose: not a stall to pause for.
    const started = await server.request('POST', '/agent/tasks', {
      instruction,
      model: 'idler',
      stall_detection: false,
    });
    expect(started.status).toBe(200);
    driven = { taskId: started.body.task_id, computerId: started.body.computer_id };
    // Started later on another computer and already over: it drives nothing.
    const other = (await server.request('POST', '/computers', {})).body.id as string;
    const over = await server.request('POST', '/agent/tasks', {
      instruction: 'Look around and stop',
      model: 'idler',
      computer_id: other,
      stall_detection: false,
    });
    idle = { taskId: over.body.task_id, computerId: other };
    await server.request('POST', `/agent/tasks/${idle.taskId}/cancel`);
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${idle.taskId}`)).body.status === 'cancelled',
    );

    const page = await open();
    // The line right under the computer's row, spanning the table.
    const drivenBy = (id: string) => page.locator(`tr[data-computer-id="${id}"] + tr.driven-by`);
    const line = drivenBy(driven.computerId);
    const link = line.getByRole('link', { name: instruction });
    await link.waitFor();
    expect(await link.getAttribute('title')).toBe(instruction);
    expect(await line.innerText()).toContain('Driven by agent task');
    const taskStatus = line.locator('.status');
    expect(await taskStatus.innerText()).toBe('running');
    await page.locator(`tr[data-computer-id="${idle.computerId}"]`).waitFor();
    expect(await drivenBy(idle.computerId).count()).toBe(0);
    expect(await page.getByText('Look around and stop').count()).toBe(0);
    // Its task keeps the driven computer from idling out; the other one counts down.
    const idleCell = (id: string) => page.locator(`tr[data-computer-id="${id}"] > td:nth-child(6)`);
    expect(await idleCell(driven.computerId).innerText()).toBe('after its task');
    expect(await idleCell(idle.computerId).innerText()).toMatch(/^\d+:\d\d$/);

    // Paused, the line says why.
    const reason = line.locator('.driven-by-reason');
    await server.request('POST', `/agent/tasks/${driven.taskId}/pause`, undefined, {
      headers: SDK_HEADERS.currentPython,
    });
    await taskStatus.filter({ hasText: /^paused$/ }).waitFor();
    const pausedBy = `by Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`;
    expect(await reason.innerText()).toBe(pausedBy);
    // The status says it too, wherever it shows (here, the Tasks screen, the task's page).
    expect(await taskStatus.getAttribute('title')).toBe(`paused ${pausedBy}`);
    await saveScreenshots(page, 'sessions-driven-paused');
    await server.request('POST', `/agent/tasks/${driven.taskId}/resume`);
    await taskStatus.filter({ hasText: /^running$/ }).waitFor();
    expect(await reason.innerText()).toBe('');
    await saveScreenshots(page, 'sessions-driven');

    await link.click();
    await page.waitForURL(new RegExp(`#/tasks/${driven.taskId}$`));
    await page.getByRole('heading', { name: driven.taskId }).waitFor();
  });

  it('names the driving task and its instruction on the computer’s own page', async () => {
    const page = await open('#/sessions');
    // Every text the banner shows as the page opens: never a wrong "nobody" before the answer.
    await page.evaluate(() => {
      const said: string[] = ((window as unknown as { said: string[] }).said = []);
      new MutationObserver(() => {
        const text = document.querySelector('.driver')?.textContent;
        if (text && said.at(-1) !== text) said.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.evaluate((hash) => (location.hash = hash), `#/computers/${driven.computerId}`);
    const banner = page.locator('.driver');
    await banner.getByText(`Agent task ${driven.taskId} is driving.`).waitFor();
    const shown = banner.getByText(instruction);
    await shown.waitFor();
    expect(await shown.getAttribute('title')).toBe(instruction);
    const said = await page.evaluate(() => (window as unknown as { said: string[] }).said);
    expect(
      said.some((text) => text.includes('Nobody')),
      said.join(' / '),
    ).toBe(false);
    await page.locator('.facts').getByText('no idle timeout while its task runs').waitFor();
    await saveScreenshots(page, 'live-view-driven');
  });

  it('lists live tasks on the Tasks screen above finished ones, even newer finished ones', async () => {
    const page = await open('#/tasks');
    await page.locator(`tr[data-task-id="${idle.taskId}"]`).waitFor();
    // Each row as a person reads it: a group heading, or a task and its status.
    const lines = await page.locator('tbody tr').evaluateAll((rows) =>
      rows.map((row) => {
        const status = row.querySelector('.status')?.textContent;
        return status
          ? `${row.getAttribute('data-task-id')} ${status}`
          : (row as HTMLElement).innerText.trim();
      }),
    );
    const finishedAt = lines.findIndex((line) => line.startsWith('Finished'));
    const isLive = (line: string) => / (running|paused)$/.test(line);
    expect(lines[0]).toMatch(/^Live\b/);
    expect(lines[1]).toBe(`${driven.taskId} running`);
    expect(finishedAt, lines.join('\n')).toBeGreaterThan(1);
    expect(lines.slice(1, finishedAt).every(isLive), lines.join('\n')).toBe(true);
    const finished = lines.slice(finishedAt + 1);
    expect(finished).toContain(`${idle.taskId} cancelled`);
    expect(finished.filter(isLive)).toEqual([]);
    await saveScreenshots(page, 'tasks-live-first');
  });
});

describe('settings', () => {
  it('creates a key shown once with the SDK snippet, and revokes it', async () => {
    const page = await open('#/settings');
    await page.getByRole('button', { name: 'Create key' }).click();
    const input = page.getByLabel('New API key');
    await input.waitFor();
    const key = await input.inputValue();
    expect(key).toMatch(/^sk_/);
    expect(await page.getByLabel('SDK environment').innerText()).toBe(
      `export LIGHTCONE_BASE_URL=${server.url} TZAFON_API_KEY=${key}`,
    );
    expect((await server.request('GET', '/computers', undefined, { key })).status).toBe(200);
    await saveScreenshots(page, 'settings');

    const created = (await server.request('GET', '/keys')).body.find((k: any) =>
      key.startsWith(k.prefix),
    );
    await page.getByRole('button', { name: `Revoke ${created.id}` }).click();
    await page.locator(`tr[data-key-id="${created.id}"] .status-revoked`).waitFor();
    expect((await server.request('GET', '/computers', undefined, { key })).status).toBe(401);
  });

  it('a page whose key stops working asks for another and stops asking with it; a new link brings one', async () => {
    const made = (await server.request('POST', '/keys', {})).body as { id: string; key: string };
    const context = await browser.newContext({ viewport: VIEWPORTS[0] });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    let refusals = 0;
    page.on('response', (response) => {
      if (response.status() === 401) refusals++;
    });
    try {
      await page.goto(`${server.url}/ui/#key=${made.key}`);
      await page.getByRole('navigation', { name: 'Screens' }).waitFor();
      // Revoked (or Benchtop restarted, which gives the link a new key) while the page is open.
      await server.request('DELETE', `/keys/${made.id}`);
      await page.getByRole('alert').getByText('no longer takes the key this page had').waitFor();
      expect(await page.getByRole('navigation', { name: 'Screens' }).count()).toBe(0);
      await saveScreenshots(page, 'key-refused');
      // No more requests with the dead key: each would count against the address.
      const seen = refusals;
      await page.waitForTimeout(3000);
      expect(refusals).toBe(seen);

      // The new link opened in the same page (no reload: only the fragment changes).
      await page.evaluate((key) => (location.hash = `key=${key}`), server.key);
      await page.getByRole('navigation', { name: 'Screens' }).waitFor();
      await page.getByRole('heading', { name: 'Sessions' }).waitFor();
      expect(page.url()).not.toContain(server.key);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stores a secret whose value it never shows again, then deletes it', async () => {
    const page = await open('#/settings');
    const secrets = page.getByRole('region', { name: 'Secrets' });
    await secrets.getByLabel('Name').fill('SHOP_PW');
    await secrets.getByLabel('Value').fill('abc');
    expect(await secrets.innerText()).toContain('shorter than 4 characters');
    await secrets.getByLabel('Value').fill('shop-password-7');
    await secrets.getByRole('button', { name: 'Save secret' }).click();
    await secrets.getByText('{{secret:SHOP_PW}}').waitFor();
    expect(await secrets.getByLabel('Value').inputValue()).toBe('');
    expect(await page.content()).not.toContain('shop-password-7');
    expect(server.core.vault.resolve('local', '{{secret:SHOP_PW}}', 'text')).toBe(
      'shop-password-7',
    );
    await saveScreenshots(page, 'settings-secrets');
    await secrets.getByRole('button', { name: 'Delete secret SHOP_PW' }).click();
    await secrets.getByText('No secret yet.').waitFor();
    expect((await server.request('GET', '/secrets')).body).toEqual([]);
  });
});

describe('settings that apply at once', () => {
  it('adds a model with its key, which reads masked afterwards', async () => {
    const page = await open('#/settings');
    const add = page.getByRole('group', { name: 'Add a model' });
    await add.getByLabel('Model name').fill('my-vlm');
    await add.getByLabel('Provider').selectOption('openai-compatible');
    await add.getByRole('button', { name: 'Add' }).click();
    const entry = page.getByRole('group', { name: 'my-vlm' });
    await entry.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
    await entry.getByLabel('API key').fill('sk-upstream-secret');
    await page.getByRole('button', { name: 'Save models' }).click();
    await page.getByText('Saved.').waitFor();

    await entry.getByText('a key is stored').waitFor();
    expect(await entry.getByLabel('API key').inputValue()).toBe('********');
    const answer = await server.request('GET', '/settings');
    expect(answer.body.settings.models.providers['my-vlm']).toEqual({
      provider: 'openai-compatible',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: '********',
    });
    expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).toContain('sk-upstream-secret');
    const models = await server.request('GET', '/v1/models');
    expect(models.body.data.map((model: { id: string }) => model.id)).toContain('my-vlm');
  });

  it('switches exec off and lowers a limit', async () => {
    const computer = (await server.request('POST', '/computers', {})).body.id as string;
    const page = await open('#/settings');
    await page.getByLabel('Allow shell commands (exec) on computers').uncheck();
    await page.getByLabel('Tabs per browser').fill('3');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();

    const exec = await server.request('POST', `/computers/${computer}/exec/sync`, {
      command: 'true',
    });
    expect(exec.status).toBe(403);
    expect(exec.body.code).toBe('exec_disabled');
    expect((await server.request('GET', '/settings')).body.settings.limits.max_tabs).toBe(3);

    await page.getByLabel('Allow shell commands (exec) on computers').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await eventually(async () => {
      const again = await server.request('POST', `/computers/${computer}/exec/sync`, {
        command: 'true',
      });
      return again.status === 200;
    });
    await server.request('DELETE', `/computers/${computer}`);
  });

  it('allows an organization shell commands, removes it, and sets the owner’s sandbox', async () => {
    const settings = async () => (await server.request('GET', '/settings')).body.settings;
    const page = await open('#/settings');
    const section = page.getByRole('form', { name: 'Organizations', exact: true });
    const name = section.getByLabel('Organization name');
    const add = section.getByRole('button', { name: 'Add', exact: true });
    await name.fill('local');
    await section.getByText('local is you, the owner').waitFor();
    expect(await add.isDisabled(), 'the owner is not an organization to add').toBe(true);

    await name.fill('  acme ');
    await add.click();
    const row = section.locator('tr[data-organization="acme"]');
    await row.getByLabel('Shell commands').check();
    expect(await row.getByLabel('Desktops').isChecked()).toBe(false);
    await section.getByRole('button', { name: 'Save organizations' }).click();
    await section.getByText('Saved.').waitFor();
    // Other per-organization settings (if any) keep their defaults.
    expect((await settings()).organizations.acme).toMatchObject({ exec: true, desktops: false });
    await row.getByText('not saved yet').waitFor({ state: 'detached' });
    await section.scrollIntoViewIfNeeded();
    await saveScreenshots(page, 'settings-organizations');

    await row.getByRole('button', { name: 'Remove acme' }).click();
    await row.waitFor({ state: 'detached' });
    await section.getByRole('button', { name: 'Save organizations' }).click();
    await eventually(async () => !('acme' in (await settings()).organizations));
    await section.getByText('No organization is allowed more than browsers.').waitFor();

    const sandboxOwner = page.getByLabel('Run my own commands and desktops in the sandbox too');
    expect(await sandboxOwner.isChecked()).toBe(true);
    await sandboxOwner.uncheck();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await eventually(async () => (await settings()).exec.sandbox_owner === false);
    await sandboxOwner.check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await eventually(async () => (await settings()).exec.sandbox_owner === true);
  });
});

describe('a desktop computer', () => {
  it('takes clicks and typing from the live view in its terminal, and shows its pointer', async () => {
    const page = await open('', VIEWPORTS[1]);
    await page.getByLabel('Kind').selectOption('desktop');
    await page.getByRole('button', { name: 'Create computer' }).click();
    const id = await computerIdOf(page);
    await eventually(async () => (await framesDrawn(page)) >= 1, 15_000);
    expect(await page.locator('.tabs-bar').count(), 'a desktop has no tabs').toBe(0);

    const terminal = await viewPoint(page, { width: 1280, height: 720 }, 200, 150);
    await page.mouse.click(terminal.x, terminal.y);
    await page.keyboard.type('echo "from the window" > ui.txt');
    await page.keyboard.press('Enter');
    await eventually(
      async () => (await readWorkspaceFile(server, id, 'ui.txt')) === 'from the window\n',
      10_000,
    );
    await page.locator('.remote-pointer').waitFor({ state: 'visible' });
    await saveScreenshots(page, 'live-view-desktop');
    // Ended under the open page, a poll of its tabs or recording in flight answers 404.
    expect(await pages.close(), 'the page logged errors').toEqual([]);
    await server.request('DELETE', `/computers/${id}`);
  });
});
