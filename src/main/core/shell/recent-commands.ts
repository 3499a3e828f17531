import type { CommandRun } from './command-run.js';

/** How long a run can be found by a retry of the request that started it. */
export const REMEMBER_MS = 10 * 60 * 1000;
/**
 * Output kept across remembered runs that are idle, in characters. Beyond it the oldest are
 * forgotten early, so a burst of chatty commands cannot hold gigabytes for ten minutes.
 */
const RETAINED_BUDGET_CHARS = 64 * 1024 * 1024;

/** What a remembered run holds: characters of output or results, and whether it still runs. */
export type Retention = { chars: number; idle: boolean };

type Entry<T> = { at: number; run: Promise<T>; started?: T };

/**
 * Runs (shell commands, batches) started in the last ten minutes, by computer, endpoint and body,
 * so that a request the SDK re-sends (x-stainless-retry-count > 0) joins the run instead of
 * starting it twice. Entries are kept in start order, which makes pruning a walk from the front.
 * `retention` tells what a started run holds; only idle runs are forgotten early for memory.
 */
export class RecentRuns<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly retention: (run: T) => Retention,
    private readonly clock: () => number = Date.now,
  ) {}

  find(key: string): Promise<T> | undefined {
    this.prune();
    return this.entries.get(key)?.run;
  }

  /** Remembers a run being started; one that fails to start is forgotten. */
  remember(key: string, run: Promise<T>): void {
    this.prune();
    const entry: Entry<T> = { at: this.clock(), run };
    this.entries.delete(key);
    this.entries.set(key, entry);
    void run.then(
      (started) => {
        entry.started = started;
        this.trim();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
  }

  private prune(): void {
    const oldest = this.clock() - REMEMBER_MS;
    for (const [key, entry] of this.entries) {
      if (entry.at > oldest) break;
      this.entries.delete(key);
    }
  }

  /** Also for a run whose retention grew after it started (a batch collecting results). */
  trim(): void {
    const held = (entry: Entry<T>) =>
      entry.started === undefined ? undefined : this.retention(entry.started);
    let total = 0;
    for (const entry of this.entries.values()) total += held(entry)?.chars ?? 0;
    for (const [key, entry] of this.entries) {
      if (total <= RETAINED_BUDGET_CHARS) break;
      const retained = held(entry);
      if (!retained?.idle) continue;
      total -= retained.chars;
      this.entries.delete(key);
    }
  }
}

/** Shell commands: a finished one is idle, and holds its output for the outcome and replay. */
export class RecentCommands extends RecentRuns<CommandRun> {
  constructor(clock: () => number = Date.now) {
    super((run) => ({ chars: run.retainedChars, idle: run.finished }), clock);
  }
}

/** The identity of a request for de-duplication: same computer, endpoint and body. */
export function commandKey(computerId: string, kind: string, body: unknown): string {
  return `${computerId}\u0000${kind}\u0000${canonicalJson(body)}`;
}

/** JSON with object keys sorted at every level, so key order does not make bodies differ. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
