import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContextOptions } from 'playwright-core';
import type { Display } from '../../../../shared/common.js';
import type { CreateComputerBody } from '../../../../shared/computers.js';
import type { Settings } from '../../config.js';
import { BenchtopError, invalidRequest } from '../../errors.js';
import { BackendPool, type Placement } from '../backends/backend-pool.js';
import type { RemoteBackend, StorageState } from '../backends/remote-backend.js';
import type { EnvironmentState, EnvironmentStore } from '../../store/environment-store.js';
import type { BrowserHost, ComputerContextOptions, FreshContext } from '../browser/browser-host.js';
import {
  BROWSER_CAPABILITIES,
  BrowserOperator,
  proxyFromUrl,
} from '../browser/browser-operator.js';
import { launchCdpBrowser } from '../browser/cdp-browser.js';
import { stealthContextOptions } from '../browser/stealth.js';
import { newCdpToken, type CdpAccess } from '../cdp-access.js';
import {
  DEFAULT_DISPLAY,
  downloadsDirOf,
  type ComputerDriver,
  type ComputerPlan,
  type StartContext,
  type StartedComputer,
} from './driver.js';

export type BrowserDriverDeps = {
  browsers: BrowserHost;
  /**
   * Where computers run: this machine's Chromium and remote backends (browser.backends); only
   * this machine's when not given.
   */
  backends?: BackendPool;
  environments: EnvironmentStore;
  settings: () => Settings;
};

/** Browser computers: a context each, of the shared Chromium or of a remote backend's. */
export class BrowserDriver implements ComputerDriver<BrowserOperator> {
  readonly kind = 'browser' as const;
  readonly capabilities = BROWSER_CAPABILITIES;
  readonly savesAfterClose = false;

  private readonly backends: BackendPool;

  constructor(private readonly deps: BrowserDriverDeps) {
    this.backends =
      deps.backends ??
      new BackendPool([{ name: 'local', type: 'local', max_computers: 10_000 }], {
        headless: deps.browsers.settings.headless,
        tracesDir: deps.browsers.tracesDir,
      });
  }

  prepare(body: CreateComputerBody): ComputerPlan {
    const display = { ...DEFAULT_DISPLAY, ...body.display };
    const contextOptions = this.contextOptions(display, body);
    if (body.host_display) {
      throw invalidRequest(
        'host_display is for desktop computers (kind: "desktop")',
        'host_display',
      );
    }
    const cdp = body.cdp === true;
    return {
      display,
      onHost: false,
      start: (context) => this.start(contextOptions, context, cdp),
    };
  }

  /** A browser's state is read from its live context, so it is saved before the close. */
  async saveState(operator: BrowserOperator): Promise<EnvironmentState> {
    return { kind: 'browser', storageState: await operator.storageState() };
  }

  /**
   * On the backend with the most free capacity; one that fails to open it is marked down and
   * the next one is tried, so a backend that just went away costs a create no error.
   */
  private async start(
    contextOptions: ComputerContextOptions,
    context: StartContext,
    cdp: boolean,
  ): Promise<StartedComputer> {
    const storageState =
      context.environmentId === undefined
        ? undefined
        : ((await this.deps.environments.storageState(
            context.org,
            context.environmentId,
          )) as StorageState);
    let failed: unknown;
    for (;;) {
      let placement: Placement;
      try {
        placement = this.backends.place(context.org, cdp);
      } catch (error) {
        throw failed ?? error;
      }
      try {
        const started = placement.remote
          ? await this.startRemote(
              placement,
              placement.remote,
              contextOptions,
              context,
              storageState,
            )
          : await this.startLocal(placement, contextOptions, context, cdp, storageState);
        return { ...started, backend: placement.backend };
      } catch (error) {
        placement.release();
        if (!placement.remote || !(error instanceof BenchtopError) || error.code !== 'unavailable')
          throw error;
        this.backends.markDown(placement.backend);
        failed = error;
      }
    }
  }

  private async startRemote(
    placement: Placement,
    remote: RemoteBackend,
    contextOptions: ComputerContextOptions,
    context: StartContext,
    storageState: StorageState | undefined,
  ): Promise<StartedComputer> {
    // Its context closing without close() means the backend or its connection went away.
    const lost = () => context.onCrash('backend_lost');
    const opened = await remote.open({ ...contextOptions, storageState }, lost);
    placement.onLost = lost;
    const operator = new BrowserOperator(opened.fresh, {
      host: opened.contexts,
      contextOptions,
      maxTabs: context.maxTabs,
      onCrash: lost,
      report: context.report,
      recording: context.recording,
      downloadsDir: downloadsDirOf(context),
      // The slot last: a backend taken out of settings closes its connections once its last
      // computer lets go, which must come after that computer's own clean-up there.
      release: async () => {
        try {
          await opened.release();
        } finally {
          placement.release();
        }
      },
    });
    await operator.startRecording();
    return { operator, env: {} };
  }

  private async startLocal(
    placement: Placement,
    contextOptions: ComputerContextOptions,
    context: StartContext,
    cdp: boolean,
    storageState: StorageState | undefined,
  ): Promise<StartedComputer> {
    const { browsers } = this.deps;
    const own = cdp ? await this.ownBrowser(contextOptions, context, storageState) : undefined;
    // A restored context carries its state from the start, so it never comes from the warm pool.
    const fresh =
      own?.fresh ??
      (storageState
        ? await browsers.newContext({ ...contextOptions, storageState })
        : await browsers.acquire(contextOptions));
    const operator = new BrowserOperator(fresh, {
      host: browsers,
      ownBrowser: cdp,
      contextOptions,
      maxTabs: context.maxTabs,
      onCrash: context.onCrash,
      report: context.report,
      recording: context.recording,
      downloadsDir: downloadsDirOf(context),
      release: () => Promise.resolve(placement.release()),
    });
    await operator.startRecording();
    const access: CdpAccess | undefined = own && {
      ...own.access,
      tabOpening: () => operator.expectTab(),
      busyUntil: (done) => operator.busyUntil(done),
    };
    return { operator, env: {}, cdp: access };
  }

  /** A Chromium of its own: in the shared one a CDP client would see every computer's pages. */
  private async ownBrowser(
    contextOptions: ComputerContextOptions,
    context: StartContext,
    storageState: StorageState | undefined,
  ): Promise<{ fresh: FreshContext; access: Omit<CdpAccess, 'tabOpening' | 'busyUntil'> }> {
    const { browserUrl, ...fresh } = await launchCdpBrowser(
      this.deps.browsers,
      join(context.privateDir, 'chromium'),
      { ...contextOptions, storageState },
    );
    const downloadsDir = downloadsDirOf(context);
    await mkdir(downloadsDir, { recursive: true, mode: 0o700 });
    return { fresh, access: { token: newCdpToken(), browserUrl, downloadsDir } };
  }

  private contextOptions(display: Display, body: CreateComputerBody): ComputerContextOptions {
    const options: ComputerContextOptions = {
      viewport: { width: display.width, height: display.height },
      deviceScaleFactor: display.scale,
    };
    if (body.stealth) Object.assign(options, stealthContextOptions(body.stealth));
    const proxy = advancedProxy(body, this.deps.settings());
    if (proxy) options.proxy = proxy;
    return options;
  }
}

/**
 * The proxy of settings' proxy.advanced_proxy_url when the body asks for it (use_advanced_proxy);
 * errors name the body's field, never the URL (it holds credentials).
 */
export function advancedProxy(
  body: CreateComputerBody,
  settings: Settings,
): BrowserContextOptions['proxy'] {
  if (!body.use_advanced_proxy) return undefined;
  const proxyUrl = settings.proxy.advanced_proxy_url;
  if (!proxyUrl) {
    throw invalidRequest(
      'use_advanced_proxy needs a proxy in settings (proxy.advanced_proxy_url)',
      'use_advanced_proxy',
    );
  }
  try {
    return proxyFromUrl(proxyUrl);
  } catch {
    throw invalidRequest(
      'use_advanced_proxy: proxy.advanced_proxy_url in settings is not a valid URL',
      'use_advanced_proxy',
    );
  }
}
