import type { CreateComputerBody } from '../../../../shared/computers.js';
import type { Settings } from '../../config.js';
import { invalidRequest } from '../../errors.js';
import { OWNER_ORG, type OrganizationPolicy } from '../../sandbox/organization-policy.js';
import type { EnvironmentState, EnvironmentStore } from '../../store/environment-store.js';
import { findChromium } from '../browser/find-chromium.js';
import { DESKTOP_CAPABILITIES, type DesktopOperator } from '../desktop/desktop-operator.js';
import { DesktopSpares } from '../desktop/desktop-spares.js';
import { closeDesktopParts, desktopOf, startDesktop } from '../desktop/start-desktop.js';
import type { WorkerEntry } from '../desktop/worker-client.js';
import { advancedProxy } from './browser-driver.js';
import {
  DEFAULT_DISPLAY,
  downloadsDirOf,
  type ComputerDriver,
  type ComputerPlan,
  type StartContext,
  type StartedComputer,
} from './driver.js';
import type { HostDriver } from './host-driver.js';

export type DesktopDriverDeps = {
  environments: EnvironmentStore;
  settings: () => Settings;
  /** Where a body with host_display goes: the machine's real screen. */
  host: HostDriver;
  /** The desktop worker's module, resolved where the app is composed. */
  workerEntry: WorkerEntry;
  /** Whether the owner's desktops are sandboxed and get a terminal: the spares' shape. */
  policy: OrganizationPolicy;
};

/** Desktop computers: a private X display each (or, with host_display, the machine's own). */
export class DesktopDriver implements ComputerDriver<DesktopOperator> {
  readonly kind = 'desktop' as const;
  readonly capabilities = DESKTOP_CAPABILITIES;
  /** Its programs (its Chromium above all) write their state to the workspace as they exit. */
  readonly savesAfterClose = true;

  /** Desktops started ahead for the owner's creates (desktop.warm_pool, read once at start). */
  private readonly spares: DesktopSpares;

  constructor(private readonly deps: DesktopDriverDeps) {
    const { policy, settings } = deps;
    this.spares = new DesktopSpares({
      size: process.platform === 'linux' ? settings().desktop.warm_pool : 0,
      dir: policy.privateDir('spare-desktops'),
      workerEntry: deps.workerEntry,
      shape: async () => ({
        ...DEFAULT_DISPLAY,
        sandboxed: await policy.sandboxed(OWNER_ORG, 'desktop'),
        network: policy.network(OWNER_ORG),
        terminal: policy.mayExec(OWNER_ORG),
        browser: this.browser(),
      }),
    });
  }

  /** Starts the spares (desktop.warm_pool) in the background. */
  prewarm(): void {
    this.spares.prewarm();
  }

  /** Resolves when the spares are ready (for benchmarks that time warm creates). */
  whenWarm(): Promise<void> {
    return this.spares.whenWarm();
  }

  /** Ends the spares; the computers end through the registry. */
  close(): Promise<void> {
    return this.spares.close();
  }

  prepare(body: CreateComputerBody): ComputerPlan {
    const display = { ...DEFAULT_DISPLAY, ...body.display };
    checkDesktopBody(body, this.deps.settings());
    if (body.host_display) return this.deps.host.prepare(body);
    return { display, onHost: false, start: (context) => this.start(display, context) };
  }

  saveState(_operator: DesktopOperator, workspace: string): Promise<EnvironmentState> {
    return Promise.resolve({ kind: 'desktop', workspace });
  }

  private async start(
    display: { width: number; height: number },
    context: StartContext,
  ): Promise<StartedComputer> {
    const shape = {
      width: display.width,
      height: display.height,
      sandboxed: context.sandboxed,
      network: context.network,
      terminal: context.terminal,
      browser: this.browser(),
    };
    const setup = {
      workspace: context.workspace,
      browser: shape.browser,
      maxTabs: context.maxTabs,
      report: context.report,
      onCrash: context.onCrash,
      downloadsDir: downloadsDirOf(context),
    };
    const spare = await this.spares.take(shape, context);
    if (!spare) {
      await restoreWorkspace(this.deps.environments, context);
      return startDesktop({
        ...shape,
        ...setup,
        privateDir: context.privateDir,
        workerEntry: this.deps.workerEntry,
      });
    }
    try {
      await restoreWorkspace(this.deps.environments, context);
    } catch (error) {
      await closeDesktopParts(spare);
      throw error;
    }
    return desktopOf(spare, setup);
  }

  private browser(): string | undefined {
    return findChromium(this.deps.settings().browser.executable_path);
  }
}

/** What no desktop body may ask for, whether on a display of its own or on the host's. */
function checkDesktopBody(body: CreateComputerBody, settings: Settings): void {
  if (body.display?.scale !== undefined && body.display.scale !== 1) {
    throw invalidRequest(
      'desktop computers have scale 1; leave display.scale out',
      'display.scale',
    );
  }
  if (body.stealth) {
    throw invalidRequest('stealth is for browser computers (kind: "browser")', 'stealth');
  }
  if (body.cdp) {
    throw invalidRequest(
      'cdp is for browser computers (kind: "browser"): a desktop has no CDP endpoint; leave cdp out',
      'cdp',
    );
  }
  // Checked as for a browser (a desktop browses without it): a body that cannot be met is refused.
  advancedProxy(body, settings);
}

/** A desktop restored from a saved environment starts with that environment's workspace. */
export async function restoreWorkspace(
  environments: EnvironmentStore,
  context: StartContext,
): Promise<void> {
  if (context.environmentId === undefined) return;
  await environments.restoreWorkspace(context.org, context.environmentId, context.workspace);
}
