import type { Backend } from '../../../../shared/backends.js';
import type { BackendType, BrowserBackendSettings } from '../../../../shared/settings.js';
import { BenchtopError, invalidRequest } from '../../errors.js';
import { PlaywrightBackend } from './playwright-backend.js';
import { redactedUrl, type RemoteBackend } from './remote-backend.js';
import { SeleniumBackend } from './selenium-backend.js';

/** How often each remote backend's health is checked. */
const HEALTH_INTERVAL_MS = 1000;
/** Failed checks in a row after which a backend's computers are ended as backend_lost. */
const LOST_AFTER_FAILURES = 2;

type Entry = {
  name: string;
  type: BackendType;
  url: string | null;
  capacity: number;
  /** Undefined for the local backend (this machine's Chromium). */
  remote: RemoteBackend | undefined;
  status: 'up' | 'down';
  failures: number;
  /** One per computer placed there (and per create under way): ends it when the backend is lost. */
  computers: Set<Placement>;
  checking: boolean;
};

/** A computer's place on a backend, held from placement until it ends. */
export type Placement = {
  readonly backend: string;
  /** The organization whose computer it is. */
  readonly org: string;
  /** The engine, for a remote backend. */
  readonly remote: RemoteBackend | undefined;
  /** Frees its slot (once; later calls do nothing). */
  release(): void;
  /** Called when the backend stops answering its health checks. */
  onLost: (() => void) | undefined;
};

export type BackendPoolOptions = {
  headless: boolean;
  /** A local folder remote browsers' traces are fetched into. */
  tracesDir: string;
};

/**
 * The places browser computers run (settings' browser.backends, docs/API.md §17): placement by
 * free capacity, and health checks that mark a remote backend down when it stops answering (its
 * computers end as backend_lost) and up again when it answers.
 */
export class BackendPool {
  private readonly entries: Entry[];
  private readonly timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(backends: readonly BrowserBackendSettings[], options: BackendPoolOptions) {
    this.entries = backends.map((backend) => ({
      name: backend.name,
      type: backend.type,
      url: backend.url === undefined ? null : redactedUrl(backend.url),
      capacity: backend.max_computers,
      remote: remoteBackend(backend, options),
      // A remote backend is down until its first health check answers.
      status: backend.type === 'local' ? 'up' : 'down',
      failures: 0,
      computers: new Set(),
      checking: false,
    }));
    if (this.entries.some((entry) => entry.remote)) {
      this.timer = setInterval(() => this.checkAll(), HEALTH_INTERVAL_MS);
      this.timer.unref();
      this.checkAll();
    }
  }

  /** Whether this machine's Chromium is one of the backends. */
  get hasLocal(): boolean {
    return this.entries.some((entry) => !entry.remote);
  }

  /**
   * The backends as `org` may see them: the machine's configuration is everyone's to read, but
   * another organization's computers are not counted for it (only the owner, `forOrg`
   * undefined, sees every computer in `running`).
   */
  list(forOrg?: string): Backend[] {
    return this.entries.map((entry) => ({
      name: entry.name,
      type: entry.type,
      url: entry.url,
      status: entry.status,
      capacity: entry.capacity,
      running: [...entry.computers].filter((placed) => !forOrg || placed.org === forOrg).length,
    }));
  }

  /**
   * A slot on the up backend with the most free capacity (the first listed among equals), taken
   * at once so simultaneous creates do not both count the same slot. `localOnly`: a computer
   * that needs this machine's Chromium (one created with cdp).
   */
  place(org: string, localOnly = false): Placement {
    const candidates = this.entries.filter(
      (entry) => (!localOnly || !entry.remote) && entry.status === 'up',
    );
    if (localOnly && !this.hasLocal) {
      throw invalidRequest(
        'cdp needs a browser on this machine, and browser.backends in settings has no backend of type "local"',
        'cdp',
      );
    }
    let best: Entry | undefined;
    for (const entry of candidates) {
      const free = entry.capacity - entry.computers.size;
      if (free > 0 && (!best || free > best.capacity - best.computers.size)) best = entry;
    }
    if (!best) throw this.noRoom(localOnly);
    const entry = best;
    const placement: Placement = {
      backend: entry.name,
      org,
      remote: entry.remote,
      release: () => void entry.computers.delete(placement),
      onLost: undefined,
    };
    entry.computers.add(placement);
    return placement;
  }

  private noRoom(localOnly: boolean): BenchtopError {
    const scope = localOnly ? this.entries.filter((entry) => !entry.remote) : this.entries;
    const described = scope
      .map((entry) =>
        entry.status === 'down'
          ? `${entry.name} is down`
          : `${entry.name} is full (${entry.computers.size} of ${entry.capacity})`,
      )
      .join(', ');
    return new BenchtopError(
      'unavailable',
      `no browser backend can take another computer now: ${described}; try again shortly, or raise max_computers in browser.backends`,
      { retryAfterSeconds: 2 },
    );
  }

  /** A backend that failed to open a computer: down until a health check says otherwise. */
  markDown(name: string): void {
    const entry = this.entries.find((candidate) => candidate.name === name);
    if (entry?.remote) entry.status = 'down';
  }

  private checkAll(): void {
    for (const entry of this.entries) {
      if (entry.remote && !entry.checking && !this.closed) void this.check(entry, entry.remote);
    }
  }

  private async check(entry: Entry, remote: RemoteBackend): Promise<void> {
    entry.checking = true;
    const up = await remote.probe().finally(() => (entry.checking = false));
    if (this.closed) return;
    entry.failures = up ? 0 : entry.failures + 1;
    entry.status = up ? 'up' : 'down';
    // A backend that went silent (its connections may not even close): its computers end.
    if (entry.failures === LOST_AFTER_FAILURES) {
      for (const placement of entry.computers) placement.onLost?.();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all(this.entries.map((entry) => entry.remote?.close() ?? Promise.resolve()));
  }
}

function remoteBackend(
  backend: BrowserBackendSettings,
  options: BackendPoolOptions,
): RemoteBackend | undefined {
  const common = { name: backend.name, headless: options.headless, tracesDir: options.tracesDir };
  switch (backend.type) {
    case 'local':
      return undefined;
    case 'playwright':
      return new PlaywrightBackend({
        ...common,
        url: backend.url!,
        executablePath: backend.executable_path,
      });
    case 'selenium':
      return new SeleniumBackend({ ...common, url: backend.url! });
  }
}
