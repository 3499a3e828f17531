import type { CreateComputerBody } from '../../../../shared/computers.js';
import type { Settings } from '../../config.js';
import { invalidRequest } from '../../errors.js';
import type { EnvironmentState, EnvironmentStore } from '../../store/environment-store.js';
import { findChromium } from '../browser/find-chromium.js';
import { DESKTOP_CAPABILITIES, type DesktopOperator } from '../desktop/desktop-operator.js';
import { startDesktop } from '../desktop/start-desktop.js';
import type { WorkerEntry } from '../desktop/worker-client.js';
import { advancedProxy } from './browser-driver.js';
import {
  DEFAULT_DISPLAY,
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
};

/** Desktop computers: a private X display each (or, with host_display, the machine's own). */
export class DesktopDriver implements ComputerDriver<DesktopOperator> {
  readonly kind = 'desktop' as const;
  readonly capabilities = DESKTOP_CAPABILITIES;
  /** Its programs (its Chromium above all) write their state to the workspace as they exit. */
  readonly savesAfterClose = true;

  constructor(private readonly deps: DesktopDriverDeps) {}

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
    await restoreWorkspace(this.deps.environments, context);
    return startDesktop({
      width: display.width,
      height: display.height,
      workspace: context.workspace,
      privateDir: context.privateDir,
      sandboxed: context.sandboxed,
      network: context.network,
      terminal: context.terminal,
      browser: findChromium(this.deps.settings().browser.executable_path),
      maxTabs: context.maxTabs,
      report: context.report,
      onCrash: context.onCrash,
      workerEntry: this.deps.workerEntry,
    });
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
