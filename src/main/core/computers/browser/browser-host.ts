import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type CDPSession,
  type Page,
} from 'playwright-core';
import { unavailable } from '../../errors.js';
import { PRIVATE_DIR } from '../../store/private-files.js';
import { findChromium, INSTALL_HINT, requireChromium } from './find-chromium.js';
import { openNetworkSession } from './page-network.js';

export type BrowserSettings = {
  executable_path: string | null;
  headless: boolean;
  warm_pool: number;
};

/**
 * The features Playwright turns off with its own --disable-features. Chromium keeps only the last
 * --disable-features it is given, so Benchtop's, which comes after, repeats them (a test checks
 * that this list still holds every one Playwright passes).
 */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  'AimEnabled',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsFirstBalancedModeAutoEnable',
  'HttpsUpgrades',
  'LensOverlay',
  'MediaRouter',
  'NetworkTimeServiceQuerying',
  'OptimizationHints',
  'PaintHolding',
  'PreconnectToSearch',
  'TcpPortRandomizationWin',
  'ThirdPartyStoragePartitioning',
  'msEdgeUpdateLaunchServicesPreferredVersion',
  'msForceBrowserSignIn',
];

/**
 * Every browser context of a headless Chromium (156) loads the address bar's popup as web pages
 * of its own (chrome://omnibox-popup.top-chrome/, two of them, some 2,000 script modules) that
 * nobody can see. Measured on a two-core machine, ten contexts: 1.6 s of CPU each to make and
 * 1.1 s each over the next ten seconds, against 0.5 s and 0.02 s without; newContext + newPage
 * 1.0 s -> 0.35 s, close 100 -> 50 ms. A browser on a desktop falls back to its native popup.
 */
const UNSEEN_UI_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

export const LAUNCH_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...UNSEEN_UI_FEATURES].join(',')}`,
];

export type FreshContext = {
  context: BrowserContext;
  page: Page;
  /**
   * A DevTools session on the page with the Network domain on, made while the context waited in
   * the pool (see BrowserHostOptions.prepareNetwork); whoever does not use it detaches it.
   */
  network?: CDPSession;
};

export type BrowserHostOptions = {
  /** Where Playwright's tracing of recorded computers writes as it goes (a temporary folder when not given). */
  tracesDir?: string;
  /**
   * Whether computers are recorded unless asked not to (settings, read at each refill): the pool
   * then also opens its pages' network sessions for their HAR, which took a recorded create
   * from 5 to 60 ms.
   */
  prepareNetwork?: () => boolean;
  /** How long one pooled context may take to make (tests shorten it). */
  poolStepTimeoutMs?: number;
  /** How long a close waits for Chromium to exit (tests shorten it). */
  closeTimeoutMs?: number;
  /** Where a close that gave up on Chromium says so. */
  log?: (message: string) => void;
};

/**
 * A pooled context not made in this time is given up on: Chromium did not answer (a hung
 * renderer), and a refill waiting for good would keep the pool from ever filling again.
 */
const POOL_STEP_TIMEOUT_MS = 30_000;
/**
 * A computer that took a pooled context while another is still ready has its first actions run
 * before the refill, which starts a renderer and would take the CPU from them: on two cores it
 * made the first navigate 110 ms against 50 without it. An emptied pool refills at once.
 */
const LAZY_REFILL_MS = 500;
/**
 * A close waits this long for Chromium to exit, then goes on: Playwright kills the Chromium it
 * launched when this process exits, and a shutdown must end within its own deadline (15 s).
 * Playwright waits for Chromium's output pipes, which any of its processes that lingers holds.
 */
const CHROMIUM_CLOSE_MS = 8000;

/** What decides whether Chromium can use its own sandbox. */
export type SandboxFacts = {
  platform: NodeJS.Platform;
  /** The user Benchtop (and so Chromium) runs as; undefined where there are no uids (Windows). */
  uid: number | undefined;
  /** That user may create a user namespace and have capabilities in it (Linux). */
  userNamespaces: boolean;
  /** A setuid-root chrome-sandbox helper comes with this Chromium (Linux). */
  setuidSandbox: boolean;
};

export type SandboxDecision = { enabled: boolean; reason: string };

/**
 * Whether Chromium runs with its sandbox, which keeps a page that breaks into its renderer from
 * reaching the rest of the machine. Chromium refuses it to root. On Linux it needs either user
 * namespaces (its namespace sandbox) or its setuid helper; without them it would not start, so it
 * runs without, as it always did before.
 */
export function chromiumSandbox(facts: SandboxFacts): SandboxDecision {
  if (facts.platform !== 'linux') {
    return { enabled: true, reason: `Chromium's own sandbox (${facts.platform})` };
  }
  if (facts.uid === 0) {
    return {
      enabled: false,
      reason:
        'Benchtop runs as root, and Chromium refuses its sandbox to root; run Benchtop as an ordinary user to have it',
    };
  }
  if (facts.userNamespaces) return { enabled: true, reason: 'Chromium sandbox (user namespaces)' };
  if (facts.setuidSandbox)
    return { enabled: true, reason: 'Chromium sandbox (setuid chrome-sandbox)' };
  return {
    enabled: false,
    reason:
      'this system does not let ordinary users create user namespaces (kernel.unprivileged_userns_clone or user.max_user_namespaces is 0, or AppArmor restricts them: kernel.apparmor_restrict_unprivileged_userns=1 as on Ubuntu 24.04) and this Chromium has no setuid chrome-sandbox; allow them or install Google Chrome, whose package brings the helper',
  };
}

/** The facts for this process and a Chromium executable (a wrapper script is followed by path). */
function sandboxFacts(executablePath: string): SandboxFacts {
  const uid = process.getuid?.();
  const linux = process.platform === 'linux';
  return {
    platform: process.platform,
    uid,
    // Root is refused the sandbox whatever the kernel allows, so nothing is tried for it.
    userNamespaces: linux && uid !== 0 && canCreateUserNamespace(),
    setuidSandbox: linux && hasSetuidSandbox(executablePath),
  };
}

/** /proc/sys switches that forbid (or, for AppArmor, strip) unprivileged user namespaces. */
const USERNS_SWITCHES: Array<[string, string]> = [
  ['/proc/sys/kernel/unprivileged_userns_clone', '0'],
  ['/proc/sys/user/max_user_namespaces', '0'],
  // Creation still succeeds there, but without capabilities in the namespace, which the
  // sandbox needs; Chromium then stops with "No usable sandbox!" unless a profile allows it.
  ['/proc/sys/kernel/apparmor_restrict_unprivileged_userns', '1'],
];

function canCreateUserNamespace(): boolean {
  for (const [path, forbidding] of USERNS_SWITCHES) {
    try {
      if (readFileSync(path, 'utf8').trim() === forbidding) return false;
    } catch {
      // A kernel without this switch does not forbid by it.
    }
  }
  // A container's seccomp profile can forbid it with every switch on: try. Without unshare(1)
  // (util-linux), the switches are all there is to go by.
  const tried = spawnSync('unshare', ['--user', '--map-root-user', 'true'], {
    stdio: 'ignore',
    timeout: 5000,
  });
  return tried.error
    ? (tried.error as NodeJS.ErrnoException).code === 'ENOENT'
    : tried.status === 0;
}

function hasSetuidSandbox(executablePath: string): boolean {
  const candidates = [process.env.CHROME_DEVEL_SANDBOX];
  try {
    candidates.push(join(dirname(realpathSync(executablePath)), 'chrome-sandbox'));
  } catch {
    // No such executable: nothing next to it either.
  }
  return candidates.some((path) => {
    if (!path) return false;
    try {
      const stat = statSync(path);
      return stat.uid === 0 && (stat.mode & 0o4000) !== 0;
    } catch {
      return false;
    }
  });
}

/** The decision for this process and executable, made once (it probes with a process). */
const decisions = new Map<string, SandboxDecision>();
export function detectChromiumSandbox(executablePath: string): SandboxDecision {
  let decision = decisions.get(executablePath);
  if (!decision) {
    decision = chromiumSandbox(sandboxFacts(executablePath));
    decisions.set(executablePath, decision);
  }
  return decision;
}

/** Playwright's options plus scripts every page of the context runs first (stealth's). */
export type ComputerContextOptions = BrowserContextOptions & { initScripts?: string[] };

/** Where a browser computer's contexts come from: this machine's Chromium or a remote one. */
export type ContextSource = {
  /** Where Playwright's tracing writes as it goes (for a remote browser: where its trace lands). */
  readonly tracesDir: string;
  newContext(options: ComputerContextOptions): Promise<FreshContext>;
  /** Set when the browser runs elsewhere: its trace is fetched when it ends. */
  readonly remote?: boolean;
};

/** A context of `browser` with its init scripts and a first page. */
export async function openContext(
  browser: Browser,
  options: ComputerContextOptions,
): Promise<FreshContext> {
  const { initScripts = [], ...contextOptions } = options;
  const context = await browser.newContext(contextOptions);
  try {
    for (const script of initScripts) await context.addInitScript(script);
    return { context, page: await context.newPage() };
  } catch (error) {
    await context.close().catch(() => {});
    throw error;
  }
}

/** Default context shape: the only one the warm pool prepares. */
const POOL_VIEWPORT = { width: 1280, height: 720 };

/**
 * The one shared Chromium (launched on first need, relaunched after a crash) and a small pool of
 * ready contexts so creating a computer does not wait for newContext + newPage.
 */
export class BrowserHost implements ContextSource {
  private browser: Promise<Browser> | undefined;
  private ready: FreshContext[] = [];
  private filling: Promise<void> | undefined;
  private lazyRefill: NodeJS.Timeout | undefined;
  /** Chromium is being launched (a close then waits for the launch before it can close it). */
  private starting = false;
  /** Aborted by close(): a refill waiting on a context Chromium will never make stops at once. */
  private readonly closing = new AbortController();
  private sandboxDecision: SandboxDecision | undefined;
  private traces: { dir: string; temporary: boolean } | undefined;

  constructor(
    /** Also how the own Chromium of a computer with cdp is launched (cdp-browser.ts). */
    readonly settings: BrowserSettings,
    private readonly options: BrowserHostOptions = {},
  ) {}

  private get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** The browser's tracesDir (made on first need). */
  get tracesDir(): string {
    if (!this.traces) {
      const configured = this.options.tracesDir;
      if (configured) mkdirSync(configured, { recursive: true, mode: PRIVATE_DIR });
      this.traces = configured
        ? { dir: configured, temporary: false }
        : { dir: mkdtempSync(join(tmpdir(), 'benchtop-traces-')), temporary: true };
    }
    return this.traces.dir;
  }

  /** Whether the running (or last started) Chromium has its sandbox, and why; undefined before. */
  get sandbox(): SandboxDecision | undefined {
    return this.sandboxDecision;
  }

  /** Starts the browser and fills the pool in the background; failures surface on first use. */
  prewarm(): void {
    if (this.settings.warm_pool > 0) this.fillPool();
  }

  async acquire(options: ComputerContextOptions): Promise<FreshContext> {
    if (isPoolShape(options)) {
      let pooled = this.ready.shift();
      while (pooled && !connected(pooled)) pooled = this.ready.shift();
      if (pooled && this.ready.length > 0) {
        this.lazyRefill ??= setTimeout(() => this.fillPool(), LAZY_REFILL_MS);
        this.lazyRefill.unref();
      } else {
        this.fillPool();
      }
      if (pooled) return pooled;
    }
    return this.newContext(options);
  }

  async newContext(options: ComputerContextOptions): Promise<FreshContext> {
    return openContext(await this.launch(), options);
  }

  launch(): Promise<Browser> {
    if (this.closed) return Promise.reject(unavailable('Benchtop is shutting down'));
    if (!this.browser) {
      this.starting = true;
      const starting = this.start().finally(() => (this.starting = false));
      // A failed start is not kept: the next computer tries again (Chromium installed since).
      starting.catch(() => {
        if (this.browser === starting) this.browser = undefined;
      });
      this.browser = starting;
    }
    return this.browser;
  }

  private async start(): Promise<Browser> {
    const executablePath = findChromium(this.settings.executable_path, process.env, {
      headless: this.settings.headless,
    });
    requireChromium(executablePath, unavailable);
    const decision = detectChromiumSandbox(executablePath);
    try {
      let browser: Browser;
      try {
        browser = await this.launchChromium(executablePath, decision.enabled);
        this.sandboxDecision = decision;
      } catch (error) {
        // The facts can mislead (a profile or policy this check does not know of); Benchtop
        // still serves, without the sandbox, and says why through `sandbox`.
        if (!decision.enabled) throw error;
        browser = await this.launchChromium(executablePath, false).catch(() => {
          throw error;
        });
        this.sandboxDecision = {
          enabled: false,
          reason: `Chromium did not start with its sandbox (${firstLine(error)})`,
        };
      }
      browser.on('disconnected', () => {
        this.browser = undefined;
        this.ready = [];
      });
      return browser;
    } catch (error) {
      throw unavailable(
        `Chromium at ${executablePath} could not start (${firstLine(error)}); ${INSTALL_HINT}`,
      );
    }
  }

  private launchChromium(executablePath: string, sandbox: boolean): Promise<Browser> {
    return chromium.launch({
      executablePath,
      headless: this.settings.headless,
      args: LAUNCH_ARGS,
      tracesDir: this.tracesDir,
      // Without it Playwright adds --no-sandbox.
      chromiumSandbox: sandbox,
      // Benchtop shuts down in order on signals; Playwright's own handlers would exit first.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  }

  private fillPool(): void {
    clearTimeout(this.lazyRefill);
    this.lazyRefill = undefined;
    if (this.filling || this.closed) return;
    this.filling = (async () => {
      while (!this.closed && this.ready.length < this.settings.warm_pool) {
        const making = this.pooledContext();
        const limit = this.options.poolStepTimeoutMs ?? POOL_STEP_TIMEOUT_MS;
        // The wait ends at the first of: the context made, the limit, Benchtop closing; its
        // timer and its listener on closing go with it (left pending, each create's piled up).
        const step = new AbortController();
        this.closing.signal.addEventListener('abort', () => step.abort(), {
          once: true,
          signal: step.signal,
        });
        const fresh = await Promise.race([
          making,
          sleep(limit, undefined, { ref: false, signal: step.signal }).catch(() => undefined),
        ]).finally(() => step.abort());
        if (!fresh) {
          // This refill ends; the next acquire starts another. A late context is closed.
          void making.then(
            (late) => late.context.close().catch(() => {}),
            () => {},
          );
          break;
        }
        // A context made as Chromium died (its pool already emptied on the disconnect) would
        // give the next computer a closed page: the next acquire fills the pool again.
        if (this.closed || !connected(fresh)) {
          await fresh.context.close().catch(() => {});
          break;
        }
        this.ready.push(fresh);
      }
    })()
      .catch(() => {
        // A failed warm-up is not an error anyone asked about; the next acquire reports it.
      })
      .finally(() => {
        this.filling = undefined;
      });
  }

  private async pooledContext(): Promise<FreshContext> {
    const fresh = await this.newContext({ viewport: POOL_VIEWPORT, deviceScaleFactor: 1 });
    if (this.options.prepareNetwork?.()) {
      fresh.network = await openNetworkSession(fresh.context, fresh.page).catch(() => undefined);
    }
    return fresh;
  }

  /** Resolves when the pool holds what it should (for benchmarks and tests that measure warm paths). */
  async whenWarm(): Promise<void> {
    if (this.lazyRefill) this.fillPool();
    while (this.filling) await this.filling;
  }

  /** Ends Chromium and the warm pool; `onStep` hears which of the two it is waiting on. */
  async close(onStep?: (part: string) => void): Promise<void> {
    clearTimeout(this.lazyRefill);
    // The browser goes first, with a refill maybe under way: a call of the refill that Chromium
    // never answers (a renderer that hangs) would otherwise hold the shutdown forever,
    // with Chromium running. Closing it ends such calls; a call it never settles (one sent as
    // Chromium closed) no longer holds the refill, which stops waiting on it when aborted.
    this.closing.abort();
    const browser = this.browser;
    this.browser = undefined;
    this.ready = [];
    const starting = this.starting;
    onStep?.(starting ? 'Chromium, still starting' : 'Chromium');
    if (browser) {
      const limit = this.options.closeTimeoutMs ?? CHROMIUM_CLOSE_MS;
      const ended = browser
        .then((launched) => launched.close())
        .then(
          () => true,
          () => true,
        );
      if (!(await Promise.race([ended, sleep(limit, false, { ref: false })]))) {
        this.options.log?.(
          `Chromium did not ${starting ? 'start' : 'close'} within ${limit / 1000} s of the shutdown; it is killed as Benchtop exits`,
        );
      }
    }
    onStep?.('the warm pool');
    await this.filling;
    if (this.traces?.temporary) rmSync(this.traces.dir, { recursive: true, force: true });
  }
}

/** Whether a pooled context's Chromium still runs. */
function connected(fresh: FreshContext): boolean {
  return fresh.context.browser()?.isConnected() !== false;
}

function isPoolShape(options: ComputerContextOptions): boolean {
  const keys = Object.keys(options).filter(
    (key) => options[key as keyof ComputerContextOptions] !== undefined,
  );
  return (
    keys.every((key) => key === 'viewport' || key === 'deviceScaleFactor') &&
    options.viewport?.width === POOL_VIEWPORT.width &&
    options.viewport?.height === POOL_VIEWPORT.height &&
    (options.deviceScaleFactor ?? 1) === 1
  );
}

export function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error)
    .split('\n')[0]!
    .trim();
}
