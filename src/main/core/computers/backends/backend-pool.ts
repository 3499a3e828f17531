import type { Backend } from '../../../../shared/backends.js';
import type { BackendType, BrowserBackendSettings } from '../../../../shared/settings.js';
import { BenchtopError, invalidRequest } from '../../errors.js';
import { PlaywrightBackend } from './playwright-backend.js';
import { redactedUrl } from '../../config.js';
import type { RemoteBackend } from './remote-backend.js';
import { SeleniumBackend } from './selenium-backend.js';

/** How often each remote backend's health is checked. */
const HEALTH_INTERVAL_MS = 1000;
/** Failed checks in a row after which a backend's computers are ended as backend_lost. */
const LOST_AFTER_FAILURES = 2;

type Entry = {
  name: string;
  type: BackendType;
  /** What the engine is (type, url, executable): a setting that changes it makes a new entry. */
  engine: string;
  url: string | null;
  capacity: number;
  /** Undefined for the local backend (this machine's Chromium). */
  remote: RemoteBackend | undefined;
  status: 'up' | 'down';
  failures: number;
  /** One per computer placed there (and per create under way): ends it when the backend is lost. */
  computers: Set<Placement>;
  checking: boolean;
  /**
   * Taken out of settings while computers ran on it: none is placed there and GET /backends no
   * longer lists it; its computers run on (and are still ended if it is lost) until the last
   * ends, and then its connections close.
   */
  retired: boolean;
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
  private entries: Entry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    backends: readonly BrowserBackendSettings[],
    private readonly options: BackendPoolOptions,
  ) {
    this.apply(backends);
  }

  /**
   * Follows a change of browser.backends while Benchtop runs: a backend whose engine is unchanged
   * keeps its state and takes the new max_computers; a new one is added (a remote one down until
   * its first health check answers); one taken out, or whose type, url or executable changed, is
   * retired (its computers run on where they are).
   */
  apply(backends: readonly BrowserBackendSettings[]): void {
    if (this.closed) return;
    const kept = new Set<Entry>();
    const next = backends.map((backend) => {
      const engine = JSON.stringify([backend.type, backend.url, backend.executable_path]);
      const same = this.entries.find(
        (entry) => !entry.retired && entry.name === backend.name && entry.engine === engine,
      );
      if (!same) return this.entry(backend, engine);
      same.capacity = backend.max_computers;
      kept.add(same);
      return same;
    });
    const gone = this.entries.filter((entry) => !kept.has(entry));
    this.entries = [...next, ...gone];
    for (const entry of gone) {
      entry.retired = true;
      this.dropIfIdle(entry);
    }
    if (this.entries.some((entry) => entry.remote)) {
      this.timer ??= setInterval(() => this.checkAll(), HEALTH_INTERVAL_MS).unref();
      this.checkAll();
    } else {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private entry(backend: BrowserBackendSettings, engine: string): Entry {
    return {
      name: backend.name,
      type: backend.type,
      engine,
      url: backend.url === undefined ? null : redactedUrl(backend.url),
      capacity: backend.max_computers,
      remote: remoteBackend(backend, this.options),
      // A remote backend is down until its first health check answers.
      status: backend.type === 'local' ? 'up' : 'down',
      failures: 0,
      computers: new Set(),
      checking: false,
      retired: false,
    };
  }

  /** Whether this machine's Chromium is one of the backends. */
  get hasLocal(): boolean {
    return this.listed().some((entry) => !entry.remote);
  }

  /**
   * The backends as `org` may see them: the machine's configuration is everyone's to read, but
   * another organization's computers are not counted for it (only the owner, `forOrg`
   * undefined, sees every computer in `running`).
   */
  list(forOrg?: string): Backend[] {
    return this.listed().map((entry) => ({
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
    const candidates = this.listed().filter(
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
      release: () => this.release(entry, placement),
      onLost: undefined,
    };
    entry.computers.add(placement);
    return placement;
  }

  /** The backends in settings now (not the retired ones). */
  private listed(): Entry[] {
    return this.entries.filter((entry) => !entry.retired);
  }

  private release(entry: Entry, placement: Placement): void {
    if (entry.computers.delete(placement) && entry.retired) this.dropIfIdle(entry);
  }

  /** A retired backend without computers goes: nothing holds its connections any more. */
  private dropIfIdle(entry: Entry): void {
    if (entry.computers.size > 0) return;
    this.entries = this.entries.filter((candidate) => candidate !== entry);
    void entry.remote?.close();
  }

  private noRoom(localOnly: boolean): BenchtopError {
    const scope = this.listed().filter((entry) => !localOnly || !entry.remote);
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
    const entry = this.listed().find((candidate) => candidate.name === name);
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
