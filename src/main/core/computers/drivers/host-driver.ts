import type { CreateComputerBody } from '../../../../shared/computers.js';
import type { Settings } from '../../config.js';
import { invalidRequest } from '../../errors.js';
import type { EnvironmentState, EnvironmentStore } from '../../store/environment-store.js';
import { findChromium } from '../browser/find-chromium.js';
import { DESKTOP_CAPABILITIES, type DesktopOperator } from '../desktop/desktop-operator.js';
import { startHostDesktop } from '../desktop/host-desktop.js';
import type { WorkerEntry } from '../desktop/worker-client.js';
import { restoreWorkspace } from './desktop-driver.js';
import {
  downloadsDirOf,
  type ComputerDriver,
  type ComputerPlan,
  type StartContext,
  type StartedComputer,
} from './driver.js';

export type HostDriverDeps = {
  environments: EnvironmentStore;
  settings: () => Settings;
  /** The desktop worker's module, resolved where the app is composed. */
  workerEntry: WorkerEntry;
};

/**
 * Host mode: a desktop computer that drives the machine's real screen. Off unless the settings
 * allow it, one computer at a time, never sandboxed; its screen size is the screen's.
 */
export class HostDriver implements ComputerDriver<DesktopOperator> {
  readonly kind = 'desktop' as const;
  readonly capabilities = DESKTOP_CAPABILITIES;
  readonly savesAfterClose = true;

  constructor(private readonly deps: HostDriverDeps) {}

  /** The body was checked as a desktop's (see DesktopDriver); what is left is host mode itself. */
  prepare(_body: CreateComputerBody): ComputerPlan {
    return {
      // The real screen's size is known once the worker runs: start() answers it.
      display: { width: 0, height: 0, scale: 1 },
      onHost: true,
      exclusive: {
        resource: 'host_display',
        checkAvailable: () => {
          if (this.deps.settings().desktop.host_mode) return;
          throw invalidRequest(
            "host mode is off: a computer may drive this machine's real screen only with desktop.host_mode set to true in settings",
            'host_display',
          );
        },
        busy: (holder) =>
          invalidRequest(
            `the host display is already driven by ${holder}; delete it first`,
            'host_display',
          ),
      },
      start: (context) => this.start(context),
    };
  }

  saveState(_operator: DesktopOperator, workspace: string): Promise<EnvironmentState> {
    return Promise.resolve({ kind: 'desktop', workspace });
  }

  private async start(context: StartContext): Promise<StartedComputer> {
    await restoreWorkspace(this.deps.environments, context);
    const host = await startHostDesktop({
      workspace: context.workspace,
      browser: findChromium(this.deps.settings().browser.executable_path),
      maxTabs: context.maxTabs,
      report: context.report,
      onCrash: context.onCrash,
      downloadsDir: downloadsDirOf(context),
      workerEntry: this.deps.workerEntry,
    });
    return {
      operator: host.operator,
      env: host.env,
      display: { width: host.width, height: host.height, scale: 1 },
    };
  }
}
