/**
 * When the screen changes, as the X server tells it (the DAMAGE extension), so a live view or a
 * recorder grabs the display when something was drawn instead of on a timer: a change is grabbed
 * as soon as it is drawn, and a screen nobody draws on is never grabbed (a grab of 1280×720 and
 * its comparison with the previous one cost a few milliseconds and 3.7 MB each time).
 *
 * One damage object on the root window, at the level that reports only the step from no damage to
 * some: one event per change, however much is drawn, until take() empties it again.
 */
import { connectX11 } from './x11-connection.js';

/** How long the X server may take to answer the round trip after emptying the damage. */
const ROUND_TRIP_TIMEOUT_MS = 1000;

export type ScreenChanges = {
  /**
   * Resolves with whether the screen changed since the last take(): at once if it has, else at
   * the first change, at poke(), or after `ms`, whichever comes first.
   */
  wait(ms: number): Promise<boolean>;
  /** Wakes every wait (input was sent: the pointer may have moved, the caller wants to know). */
  poke(): void;
  /**
   * Called right before a grab: forgets the changes so far, and resolves once the X server has
   * emptied the damage, so a change drawn after it (and maybe not in the grab) is reported again.
   */
  take(): Promise<void>;
};

type Damage = {
  ReportLevel: { NonEmpty: number };
  Create(damage: number, drawable: number, level: number): void;
  Subtract(damage: number, repair: number, parts: number): void;
};

/**
 * Watches `display`'s screen. Rejects where the display has no DAMAGE extension; a connection that
 * breaks later reports a change at every wait, so the caller grabs as often as it would without.
 */
export async function watchScreenChanges(display: string): Promise<ScreenChanges> {
  const { client, root } = await connectX11(display);
  const damage = await new Promise<Damage>((resolve, reject) =>
    client.require<Damage>('damage', (error, extension) =>
      error ? reject(error) : resolve(extension),
    ),
  );
  const id = client.AllocID();
  // Created non-empty: the first wait reports a change, and a new viewer gets its first frame.
  damage.Create(id, root, damage.ReportLevel.NonEmpty);

  let changed = true;
  let broken = false;
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const done of waiting) done();
    waiting.clear();
  };
  client.on('event', (event) => {
    if (event.name !== 'DamageNotify') return;
    changed = true;
    wake();
  });
  client.on('error', () => {
    broken = true;
    wake();
  });

  return {
    async wait(ms) {
      if (!changed && !broken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          function done() {
            clearTimeout(timer);
            waiting.delete(done);
            resolve();
          }
          waiting.add(done);
        });
      }
      return changed || broken;
    },
    poke: wake,
    async take() {
      if (broken) return;
      changed = false;
      damage.Subtract(id, 0, 0);
      // A reply on this connection comes after the Subtract is done: the grab that follows, on
      // the worker's other connection, cannot come before it.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ROUND_TRIP_TIMEOUT_MS);
        client.GetInputFocus(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
