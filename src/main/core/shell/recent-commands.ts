import type { CommandRun } from './command-run.js';

/** How long a command can be found by a retry of the request that started it. */
export const REMEMBER_MS = 10 * 60 * 1000;
/**
 * Output kept across remembered commands that have finished, in characters. Beyond it the oldest
 * are forgotten early, so a burst of chatty commands cannot hold gigabytes for ten minutes.
 */
const RETAINED_BUDGET_CHARS = 64 * 1024 * 1024;

type Entry = { at: number; run: Promise<CommandRun>; started?: CommandRun };

/**
 * Commands started in the last ten minutes, by computer, endpoint and body, so that a request the
 * SDK re-sends (x-stainless-retry-count > 0) joins the command instead of running it twice.
 * Entries are kept in start order, which makes pruning a walk from the front.
 */
export class RecentCommands {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: () => number = Date.now) {}

  find(key: string): Promise<CommandRun> | undefined {
    this.prune();
    return this.entries.get(key)?.run;
  }

  /** Remembers a command being started; one that fails to start is forgotten. */
  remember(key: string, run: Promise<CommandRun>): void {
    this.prune();
    const entry: Entry = { at: this.clock(), run };
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

  private trim(): void {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.started?.retainedChars ?? 0;
    for (const [key, entry] of this.entries) {
      if (total <= RETAINED_BUDGET_CHARS) break;
      if (!entry.started?.finished) continue;
      total -= entry.started.retainedChars;
      this.entries.delete(key);
    }
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
