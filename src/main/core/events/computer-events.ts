import type { ComputerEvent } from '../../../shared/events.js';
import { now } from '../ids.js';

type Distribute<T> = T extends unknown ? Omit<T, 'computer_id' | 'timestamp'> : never;
/** An event as its publisher gives it: the bus stamps computer_id and timestamp. */
export type ComputerEventInput = Distribute<ComputerEvent>;
export type ComputerEventListener = (event: ComputerEvent) => void;

/**
 * Typed pub/sub per computer: what a computer does, for whoever watches it (the events stream, the
 * window). Publishing never waits for listeners and never fails because of one.
 */
export class ComputerEvents {
  private readonly listeners = new Map<string, Set<ComputerEventListener>>();

  /** Sees every event of every computer, before its listeners (the flight recorder). */
  private tap: ComputerEventListener | undefined;

  constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

  /** Sets the one listener of all computers' events; it does not count as a listener of any. */
  setTap(tap: ComputerEventListener): void {
    this.tap = tap;
  }

  publish(computerId: string, input: ComputerEventInput): void {
    const listeners = this.listeners.get(computerId);
    if (!listeners && !this.tap) return;
    const event = { ...input, computer_id: computerId, timestamp: now() } as ComputerEvent;
    if (this.tap) this.call(this.tap, event);
    if (!listeners) return;
    // A copy: a listener may dispose itself (or another) while being called.
    for (const listener of [...listeners]) this.call(listener, event);
  }

  private call(listener: ComputerEventListener, event: ComputerEvent): void {
    try {
      listener(event);
    } catch (error) {
      this.onListenerError(error);
    }
  }

  /** Listens to one computer's events; the returned function stops listening. */
  subscribe(computerId: string, listener: ComputerEventListener): () => void {
    let listeners = this.listeners.get(computerId);
    if (!listeners) this.listeners.set(computerId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.listeners.get(computerId) === listeners) {
        this.listeners.delete(computerId);
      }
    };
  }

  /** How many listeners follow a computer (zero once every stream of it has closed). */
  listenerCount(computerId: string): number {
    return this.listeners.get(computerId)?.size ?? 0;
  }
}
