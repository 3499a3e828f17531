import { readFileSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  BrowserHost,
  PLAYWRIGHT_DISABLED_FEATURES,
  type BrowserHostOptions,
} from '../../src/main/core/computers/browser/browser-host.js';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';
import { commandOf, descendants, isAlive, parentOf } from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

/** The browser processes of the Chromiums launched here (not their helpers). */
function browserProcesses(): number[] {
  return descendants(process.pid).filter((pid) => isBrowser(commandOf(pid).split(' ')));
}

function isBrowser(args: string[]): boolean {
  return args.includes('--remote-debugging-pipe') && !args.some((arg) => arg.startsWith('--type='));
}

/** The arguments of the browser process each Chromium launched here runs (not its helpers). */
function browserProcessArgs(): string[][] {
  return descendants(process.pid)
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        return [];
      }
    })
    .filter(isBrowser);
}

/**
 * The arguments of the one browser process `launch` starts. Counted by command line: a child the
 * browser has forked and not yet turned into a helper (its zygote) still shows the browser's.
 */
async function launchedBy(launch: () => Promise<unknown>): Promise<string[]> {
  const before = new Set(browserProcessArgs().map((args) => args.join(' ')));
  await launch();
  const launched = new Map(
    browserProcessArgs()
      .filter((args) => !before.has(args.join(' ')))
      .map((args) => [args.join(' '), args]),
  );
  expect(launched.size).toBe(1);
  return [...launched.values()][0]!;
}

/** What the browser process was told to turn off: the last --disable-features, as Chromium reads. */
function disabledFeatures(args: string[]): string[] {
  const last = args.filter((arg) => arg.startsWith('--disable-features=')).at(-1);
  return last ? last.slice('--disable-features='.length).split(',') : [];
}

const host = new BrowserHost({ executable_path: null, headless: true, warm_pool: 0 });
let plain: Browser | undefined;
afterAll(async () => {
  await Promise.all([host.close(), plain?.close()]);
});

describe('the Chromium that browser computers run in', () => {
  it('still turns off every feature Playwright turns off', async () => {
    const playwrights = disabledFeatures(
      await launchedBy(async () => {
        plain = await chromium.launch({ executablePath: findChromium(null) });
      }),
    );
    expect(playwrights.length).toBeGreaterThan(0);
    // A feature Playwright added since would be turned back on by Benchtop's own list.
    expect(PLAYWRIGHT_DISABLED_FEATURES).toEqual(expect.arrayContaining(playwrights));

    const ours = await launchedBy(() => host.launch());
    expect(disabledFeatures(ours)).toEqual(expect.arrayContaining(playwrights));
  });

  it('is the headless shell (.ci/setup installs it); a browser someone sees is the full one', async () => {
    const headless = findChromium(null, {}, { headless: true });
    expect(headless).toMatch(/chromium-headless-shell$/);
    expect(findChromium(null, {}, { headless: false })).not.toMatch(/headless-shell/);
    const browser = await host.launch();
    expect(browser.version()).toMatch(/^\d+\./);
    const running = browserProcessArgs().map((args) => args[0]);
    expect(running).toContain(headless);
  });

  it('opens no page of its own beside a computer’s (the address bar’s hidden popup)', async () => {
    const browser = await host.launch();
    const fresh = await host.newContext({ viewport: { width: 1280, height: 720 } });
    const session = await browser.newBrowserCDPSession();
    try {
      // Every target, those of the browser's own UI included.
      const { targetInfos } = await session.send('Target.getTargets', { filter: [{}] });
      expect(targetInfos.map((target) => target.url)).not.toContainEqual(
        expect.stringMatching(/^chrome:/),
      );
      expect(targetInfos.filter((target) => target.type === 'page')).toHaveLength(1);
    } finally {
      await session.detach();
      await fresh.context.close();
    }
  });
});

const POOL_SHAPE = { viewport: { width: 1280, height: 720 } };

/**
 * A host with a warm pool of one whose refill hangs once asked to: the refill's page is made,
 * then its renderer stops answering (stopped here) before the page's network session opens.
 */
async function hangingPool(refillLimitMs?: number, extra: BrowserHostOptions = {}) {
  const stopped: number[] = [];
  /** This host's browser process, while the next refill is to hang. */
  let hangIn: number | undefined;
  // Read at each refill: the short limit applies from the hang on, not to Chromium's launch.
  const options: BrowserHostOptions = {
    ...extra,
    prepareNetwork: () => {
      for (const pid of hangIn === undefined ? [] : descendants(hangIn)) {
        if (!commandOf(pid).includes('--type=renderer')) continue;
        process.kill(pid, 'SIGSTOP');
        stopped.push(pid);
      }
      hangIn = undefined;
      return true;
    },
  };
  /** Chromium answers again (the refill limit is back to its default). */
  const resume = () => {
    options.poolStepTimeoutMs = undefined;
    for (const pid of stopped.splice(0)) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone with its browser.
      }
    }
  };
  const host = new BrowserHost({ executable_path: null, headless: true, warm_pool: 1 }, options);
  // Also after a test that failed or timed out, whose own code never reaches its end: no renderer
  // is left stopped, and no Chromium left running.
  onTestFinished(async () => {
    resume();
    await host.close();
  });
  const others = new Set(browserProcesses());
  host.prewarm();
  await host.whenWarm();
  // The browser process, not a child it forked a moment ago that still shows its command line.
  const started = browserProcesses().filter((pid) => !others.has(pid));
  const launched = started.filter((pid) => isAlive(pid) && !started.includes(parentOf(pid)));
  expect(launched).toHaveLength(1);
  const browser = launched[0]!;
  return {
    host,
    browser,
    /** Takes the pooled context; the refill behind it hangs. */
    async hangRefill() {
      hangIn = browser;
      options.poolStepTimeoutMs = refillLimitMs;
      await host.acquire(POOL_SHAPE);
      await eventually(() => stopped.length > 0);
    },
    resume,
  };
}

describe('a warm-pool refill that Chromium never answers', () => {
  it('is given up, and the pool fills again once Chromium answers', async () => {
    const pool = await hangingPool(1000);
    await pool.hangRefill();
    await pool.host.whenWarm();
    pool.resume();
    const fresh = await pool.host.acquire(POOL_SHAPE);
    expect(await fresh.page.evaluate(() => 1 + 1)).toBe(2);
    await pool.host.whenWarm();
    const pooled = await pool.host.acquire(POOL_SHAPE);
    expect(await pooled.page.evaluate(() => 2 + 2)).toBe(4);
  });

  it('does not keep closing the host from ending Chromium', async () => {
    const pool = await hangingPool();
    const { host, browser } = pool;
    await pool.hangRefill();
    const waitingOn: string[] = [];
    const closed = host.close((part) => waitingOn.push(part));
    await eventually(() => !isAlive(browser), 10_000);
    // Its stopped renderers still hold its output pipes, whose end Playwright waits for.
    expect(waitingOn).toEqual(['Chromium']);
    pool.resume();
    await closed;
    expect(waitingOn).toEqual(['Chromium', 'the warm pool']);
  });

  it('gives up waiting for a Chromium that does not exit, and says so', async () => {
    const logged: string[] = [];
    const pool = await hangingPool(undefined, {
      closeTimeoutMs: 1000,
      log: (line) => logged.push(line),
    });
    await pool.hangRefill();
    // The stopped renderers keep Chromium's pipes open: its close cannot end until they resume.
    await pool.host.close();
    expect(logged).toEqual([
      'Chromium did not close within 1 s of the shutdown; it is killed as Benchtop exits',
    ]);
  });
});

describe('a warm pool of two', () => {
  it('refills by itself after computers took one or all of its contexts', async () => {
    const pool = new BrowserHost({ executable_path: null, headless: true, warm_pool: 2 });
    onTestFinished(() => pool.close());
    const browser = await pool.launch();
    pool.prewarm();
    await pool.whenWarm();
    expect(browser.contexts()).toHaveLength(2);
    // One taken, one still ready: the refill comes after the new computer's first moments.
    const first = await pool.acquire(POOL_SHAPE);
    await eventually(() => browser.contexts().length === 3, 10_000);
    // Both taken: the pool fills again without anyone waiting for it.
    const [second, third] = [await pool.acquire(POOL_SHAPE), await pool.acquire(POOL_SHAPE)];
    await eventually(() => browser.contexts().length === 5, 10_000);
    for (const fresh of [first, second, third]) {
      expect(await fresh.page.evaluate(() => 2 + 2)).toBe(4);
    }
  });

  it('leaves no wait of its own behind once a context is made: a dozen refills warn of nothing', async () => {
    const pool = new BrowserHost({ executable_path: null, headless: true, warm_pool: 1 });
    onTestFinished(() => pool.close());
    await pool.launch();
    // Each refill's time limit used to stay pending (a timer, a listener on the host's closing)
    // for 30 s after its context was made: eleven of them and Node warned of a leak.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    onTestFinished(() => void process.off('warning', onWarning));
    for (let i = 0; i < 12; i++) {
      const fresh = await pool.acquire(POOL_SHAPE);
      await pool.whenWarm();
      await fresh.context.close();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([]);
  });
});
