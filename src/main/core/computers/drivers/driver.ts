import { join } from 'node:path';
import type { Display } from '../../../../shared/common.js';
import type { ComputerKind, CreateComputerBody } from '../../../../shared/computers.js';
import type { BenchtopError } from '../../errors.js';
import type { ComputerEventInput } from '../../events/computer-events.js';
import type { ComputerSandbox } from '../../sandbox/computer-sandbox.js';
import type { EnvironmentState } from '../../store/environment-store.js';
import type { ActionName } from '../action.js';
import type { CdpAccess } from '../cdp-access.js';
import type { Operator } from '../operator.js';

/** Tabs opened, closed and switched, and navigations: what a computer reports as it runs. */
export type ComputerActivity = Extract<
  ComputerEventInput,
  { type: 'tab' | 'tab_refused' | 'navigation' | 'download' }
>;

/** The folder of a recording where a browser computer's downloads are kept for after its end. */
export const RECORDED_DOWNLOADS = 'downloads';

/**
 * Where a recorded computer's driver writes what only it can see (docs/API.md §13): a browser's
 * requests (HAR), console messages and Playwright trace. The recorder owns the folder.
 */
export type RecordingSink = {
  /** The recording's folder (it exists). */
  dir: string;
  /** Removes secrets (API keys, provider keys, proxy passwords) from any text before it is written. */
  scrub: (text: string) => string;
  console: (entry: {
    level: string;
    text: string;
    url: string | null;
    tabId: string | null;
  }) => void;
  /**
   * Work on the recording's files that goes on after the computer ended (its trace being
   * zipped): the recording reads complete once it is done, and the computer's end does not wait.
   */
  finishLater: (work: Promise<void>) => void;
};

/** Where a computer's downloads are kept: its own folder, outside any sandbox, gone when it ends. */
export function downloadsDirOf(context: Pick<StartContext, 'privateDir'>): string {
  return join(context.privateDir, 'downloads');
}

/** What the registry hands a driver to start one computer. */
export type StartContext = {
  id: string;
  org: string;
  /** Its own folder, made (and restored from a saved environment, if any) before start. */
  workspace: string;
  /** A host folder only this computer uses (its X cookie, its sandbox's /tmp). */
  privateDir: string;
  /** The saved environment it is restored from, checked to be of this kind. */
  environmentId?: string;
  /** Its commands and programs run in a sandbox. */
  sandboxed: boolean;
  /** Whether its sandbox shares the machine's network. */
  network: boolean;
  /** Whether its organization may run commands (a desktop gets a terminal only then). */
  terminal: boolean;
  /** Set when the computer is recorded: what the driver alone can see goes there. */
  recording?: RecordingSink;
  /** limits.max_tabs as it is at each call. */
  maxTabs: () => number;
  report: (activity: ComputerActivity) => void;
  /**
   * To call once if the computer dies on its own (never during start: that fails start):
   * `backend_lost` when the remote backend it ran on went away.
   */
  onCrash: (reason?: 'crashed' | 'backend_lost') => void;
};

export type StartedComputer = {
  operator: Operator;
  /** Variables every shell command of the computer runs with (DISPLAY for a desktop). */
  env: Record<string, string>;
  /** Its screen when the driver only learns it at start (the machine's real one). */
  display?: Display;
  /** The sandbox it started in, if it needed one from the start. */
  sandbox?: ComputerSandbox;
  /** How a CDP client reaches it, when it was created with cdp. */
  cdp?: CdpAccess;
  /** The browser backend it was placed on (browser.backends). */
  backend?: string;
};

/** A create body checked by its kind's driver: what to start and under which conditions. */
export type ComputerPlan = {
  display: Display;
  /** It drives the machine itself: never sandboxed, and only the owner's organization may. */
  onHost: boolean;
  /** A resource one computer at a time may hold (the real screen). */
  exclusive?: {
    resource: string;
    /** Throws when the resource may not be used at all now (checked after the org's policy). */
    checkAvailable(): void;
    /** The error when another computer holds it. */
    busy: (holder: string) => BenchtopError;
  };
  start(context: StartContext): Promise<StartedComputer>;
};

/**
 * One kind of computer: what it can do, what a create body may ask of it, how it starts and how
 * its state is saved. The registry knows computers only through these.
 */
export interface ComputerDriver<O extends Operator = Operator> {
  readonly kind: ComputerKind;
  /** The actions its operators perform: the one place that says what a kind supports. */
  readonly capabilities: ReadonlySet<ActionName>;
  /** Checks the body for this kind; a BenchtopError's path names the body's field. */
  prepare(body: CreateComputerBody): ComputerPlan;
  /** A persistent computer's state as an environment. */
  saveState?(operator: O, workspace: string): Promise<EnvironmentState>;
  /** Whether saveState reads after close (programs write their state as they exit) or before. */
  readonly savesAfterClose?: boolean;
}

export const DEFAULT_DISPLAY: Display = { width: 1280, height: 720, scale: 1 };
