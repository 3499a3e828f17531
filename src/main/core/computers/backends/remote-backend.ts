import type { BrowserContextOptions } from 'playwright-core';
import type {
  ComputerContextOptions,
  ContextSource,
  FreshContext,
} from '../browser/browser-host.js';

/** Cookies, localStorage and IndexedDB of a browser context, as Playwright saves them. */
export type StorageState = Exclude<BrowserContextOptions['storageState'], string | undefined>;

/** One computer's browser on a remote backend. */
export type RemoteComputer = {
  fresh: FreshContext;
  /** Where change_proxy makes its next context: the same remote browser. */
  contexts: ContextSource;
  /** Frees what it holds there once its context closed (a Grid's WebDriver session). */
  release(): Promise<void>;
};

/** A remote engine that runs browser computers: a Playwright server or a Selenium Grid 4 hub. */
export interface RemoteBackend {
  /**
   * Starts one computer's browser context there. `onLost` is called when the backend shows that
   * browser gone while the connection to it stays open (a Grid node that died: the hub keeps the
   * CDP socket).
   */
  open(
    options: ComputerContextOptions & { storageState?: StorageState },
    onLost: () => void,
  ): Promise<RemoteComputer>;
  /** Whether it answers now (a health check; never throws). */
  probe(): Promise<boolean>;
  /** Lets go of its connections (Benchtop shuts down). */
  close(): Promise<void>;
}

/** How long a health check or a clean-up request to a backend may take. */
export const PROBE_TIMEOUT_MS = 3000;
/** How long opening a computer's browser there may take (a Grid may start a browser for it). */
export const OPEN_TIMEOUT_MS = 60_000;
