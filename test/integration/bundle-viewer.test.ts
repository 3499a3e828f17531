import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshotPath } from '../helpers/ui-browser.js';
import {
  bundleOf,
  makeFixture,
  stepOffset,
  unzipTo,
  type Fixture,
} from '../helpers/bundle-fixture.js';

const VIEWPORT = { width: 1280, height: 800 };

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});
afterAll(() => browser?.close());

type Viewer = {
  page: Page;
  /** Every URL the page asked for. */
  requests: string[];
  /** Console errors (CSP refusals among them) and uncaught exceptions. */
  errors: string[];
};

/** Opens index.html of an unzipped bundle from file://, with every network request refused. */
async function openViewer(folder: string): Promise<Viewer> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  await context.route('**/*', (route) =>
    route.request().url().startsWith('file://') ? route.continue() : route.abort(),
  );
  // When the first image of the page finished loading (load events reach a capturing listener).
  await context.addInitScript(() => {
    document.addEventListener(
      'load',
      (event) => {
        const times = window as unknown as { firstImageAt?: number };
        if ((event.target as Element).tagName === 'IMG') times.firstImageAt ??= performance.now();
      },
      true,
    );
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  await page.goto(pathToFileURL(`${folder}/index.html`).href);
  await page.locator('body[data-ready="true"]').waitFor();
  return { page, requests, errors };
}

/** Resolves once the image has loaded (it is lazy: scrolled to first); its natural width. */
async function loadedWidth(page: Page, selector: string): Promise<number> {
  const image = page.locator(selector);
  await image.scrollIntoViewIfNeeded();
  return image.evaluate((img: HTMLImageElement) =>
    img.complete
      ? img.naturalWidth
      : new Promise<number>((resolve) => {
          img.addEventListener('load', () => resolve(img.naturalWidth), { once: true });
          img.addEventListener('error', () => resolve(0), { once: true });
        }),
  );
}

describe('the bundle viewer, opened from its unzipped folder with no network', () => {
  let fixture: Fixture;
  let folder: string;
  let viewer: Viewer;

  beforeAll(async () => {
    fixture = await makeFixture(4, 4);
    folder = await unzipTo(await bundleOf(fixture.input), fixture.root);
    viewer = await openViewer(folder);
  });
  afterAll(() => fixture?.cleanup());

  it('shows the start, every step with its screenshot loaded, and the missing one as missing', async () => {
    const { page } = viewer;
    expect(await page.locator('.entry-step, .entry-start').count()).toBe(5);
    for (const step of [1, 2, 3]) {
      expect(await loadedWidth(page, `[data-step="${step}"] img`), `step ${step}`).toBe(640);
    }
    expect(await page.locator('[data-step="4"] .shot-empty').innerText()).toBe(
      'screenshot not in the bundle: it was no longer kept',
    );
    expect(await page.locator('[data-step="1"] .mark-ring').count()).toBe(1);
    expect(await page.locator('[data-step="3"] .mark-line').count()).toBe(1);
    expect(await page.locator('[data-step="2"] .shot-caption').innerText()).toBe(
      'type “my key is [redacted]”',
    );
  });

  it('shows what the model thought, said and did, the results, and what a person did', async () => {
    const { page } = viewer;
    const lines = (n: number) =>
      page
        .locator(`[data-step="${n}"] .event`)
        .evaluateAll((items) =>
          items.map((item) => [...item.children].map((part) => part.textContent).join(' | ')),
        );
    expect(await lines(1)).toEqual([
      'thinks | Step 1: I look for the next field.',
      'says | Text with </script><!-- <b>markup</b> in it',
      'does | click at 130, 90 | ✓',
    ]);
    expect(await lines(2)).toEqual([
      'thinks | Step 2: I look for the next field.',
      'person said | please use the second form',
      'paused | ',
      'resumed | ',
      'does | type “my key is [redacted]” | failed: no element at 300, 200',
    ]);
    expect((await lines(4)).at(-1)).toBe('completed | all done');
    expect(await page.locator('.entry-person .person').allInnerTexts()).toEqual([
      'a person: click at 100, 120',
      'a person: keypress control+a',
    ]);
    expect(await page.locator('#summary').innerText()).toContain('Result\nall done');
    const request = page.locator('[data-step="1"]').getByRole('link', { name: 'model request' });
    expect(await request.getAttribute('href')).toBe('model/task_bundlefixture/001.request.json');
  });

  it('clicking step 3 seeks the video to its time; playing marks the current step', async () => {
    const { page } = viewer;
    const video = page.locator('video');
    await video.evaluate((element: HTMLVideoElement) =>
      element.readyState >= 1
        ? undefined
        : new Promise((resolve) => element.addEventListener('loadedmetadata', resolve)),
    );
    expect(await video.evaluate((element: HTMLVideoElement) => element.duration)).toBeCloseTo(3, 1);

    await page.locator('[data-step="3"] h3').click();
    const time = await video.evaluate((element: HTMLVideoElement) => element.currentTime);
    expect(Math.abs(time - stepOffset(3))).toBeLessThanOrEqual(0.2);
    expect(await page.locator('.entry.current').getAttribute('data-step')).toBe('3');
    // A picture for a person to look at (not compared): the whole page, step 3 marked.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshotPath('bundle-viewer.png'), fullPage: true });

    await page.locator('[data-step="1"] .seek').click();
    expect(await page.locator('.entry.current').getAttribute('data-step')).toBe('1');
    // The entries marked as current while it plays on from step 1 (0.3 s) to the end.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        const current = document.querySelector('.entry.current');
        const name = current?.classList.contains('entry-person')
          ? 'person'
          : current?.getAttribute('data-step');
        if (name && name !== seen.at(-1)) seen.push(name);
      }).observe(document.getElementById('timeline')!, {
        subtree: true,
        attributeFilter: ['class'],
      });
    });
    await video.evaluate((element: HTMLVideoElement) => {
      element.muted = true;
      return element.play();
    });
    await page.locator('.entry.current[data-step="4"]').waitFor();
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen).toEqual(['2', 'person', '3', '4']);
    await video.evaluate((element: HTMLVideoElement) => element.pause());
  });

  it('asked for nothing but files of its own folder, and logged no error', () => {
    const own = pathToFileURL(`${folder}/`).href;
    expect(viewer.requests.filter((url) => !url.startsWith(own))).toEqual([]);
    const files = new Set(viewer.requests.map((url) => url.slice(own.length)));
    expect([...files].sort()).toEqual([
      'index.html',
      'screenshots/step-001.png',
      'screenshots/step-002.png',
      'screenshots/step-003.png',
      'video.webm',
    ]);
    expect(viewer.errors).toEqual([]);
  });
});

describe('the bundle viewer of a 50-step task', () => {
  let fixture: Fixture;
  let folder: string;

  beforeAll(async () => {
    fixture = await makeFixture(50);
    folder = await unzipTo(await bundleOf(fixture.input), fixture.root);
  });
  afterAll(() => fixture?.cleanup());

  it('shows the first step at once and loads the screenshots further down only as they near', async () => {
    const { page, requests, errors } = await openViewer(folder);
    expect(await loadedWidth(page, '[data-step="1"] img')).toBe(640);
    const shown = await page.evaluate(() => ({
      timeline: performance.getEntriesByName('timeline-shown')[0]!.startTime,
      firstPaint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
      firstScreenshot: (window as unknown as { firstImageAt: number }).firstImageAt,
    }));
    const screenshots = () => requests.filter((url) => url.includes('/screenshots/')).length;
    const early = screenshots();
    console.info(
      `50-step bundle: timeline shown ${shown.timeline.toFixed(0)} ms after navigation start, ` +
        `first paint ${shown.firstPaint?.toFixed(0)} ms, first screenshot loaded at ` +
        `${shown.firstScreenshot.toFixed(0)} ms; ${early} of 50 screenshots asked for so far`,
    );
    expect(await page.locator('.entry-step').count()).toBe(50);
    expect(early).toBeLessThan(50);

    expect(await loadedWidth(page, '[data-step="50"] img')).toBe(640);
    expect(screenshots()).toBeGreaterThan(early);
    expect(errors).toEqual([]);
  });
});

describe('the bundle viewer of a task whose computer was not recorded', () => {
  it('shows the steps at their times into the task, without a video or screenshots', async () => {
    const fixture = await makeFixture(2);
    try {
      const input = { ...fixture.input, recordingDir: undefined, recording: undefined };
      const folder = await unzipTo(await bundleOf(input), fixture.root);
      const { page, errors } = await openViewer(folder);
      expect(await page.locator('video').count()).toBe(0);
      expect(await page.locator('#player').innerText()).toContain('This bundle has no video');
      expect(await page.locator('.entry .when').allInnerTexts()).toEqual([
        '+0:00.0',
        '+0:00.2',
        '+0:00.9',
      ]);
      expect(await page.locator('.seekable').count()).toBe(0);
      expect(await page.locator('.shot-empty').allInnerTexts()).toEqual([
        'screenshot not in the bundle: the computer was not recorded',
        'screenshot not in the bundle: the computer was not recorded',
      ]);
      expect(errors).toEqual([]);
    } finally {
      await fixture.cleanup();
    }
  });
});
