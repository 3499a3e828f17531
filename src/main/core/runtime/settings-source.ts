import type { Settings } from '../config.js';

/** Told of every new snapshot, with the one it replaced. */
export type SettingsListener = (next: Readonly<Settings>, previous: Readonly<Settings>) => void;

/**
 * The settings core runs with, as deep-frozen snapshots: a change replaces the snapshot instead
 * of editing it, so nothing can hold a section that silently stops following changes, and a
 * write into a snapshot fails loudly. Read `current()` where a value is used.
 */
export class SettingsSource {
  private snapshot: Readonly<Settings>;
  private readonly listeners = new Set<SettingsListener>();

  constructor(initial: Settings) {
    this.snapshot = frozenCopy(initial);
  }

  current(): Readonly<Settings> {
    return this.snapshot;
  }

  /** Makes `next` (copied, then frozen) the current snapshot and tells every listener. */
  replace(next: Settings): void {
    const previous = this.snapshot;
    this.snapshot = frozenCopy(next);
    for (const listener of this.listeners) listener(this.snapshot, previous);
  }

  /** Calls `listener` after each replace; returns the unsubscribe. */
  subscribe(listener: SettingsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
