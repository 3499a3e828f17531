import type { Point } from './input-mapping.js';

/** An action the live view sends, by its endpoint under /computers/{id}/. */
export type ViewAction =
  | { path: 'click' | 'double-click' | 'right-click'; body: Point }
  | { path: 'scroll'; body: Point & { dx: number; dy: number } }
  | { path: 'type'; body: { text: string } }
  | { path: 'hotkey'; body: { keys: string[] } };

/**
 * Sends the person's actions one at a time, in the order they happened. While one is on its way,
 * typed characters and wheel turns that pile up are merged, so fast typing or scrolling becomes a
 * few requests instead of a queue that lags behind the hand.
 */
export class ActionQueue {
  private pending: ViewAction[] = [];
  private running = false;

  constructor(
    private readonly perform: (action: ViewAction) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  push(action: ViewAction): void {
    const last = this.pending.at(-1);
    if (last?.path === 'type' && action.path === 'type') {
      last.body.text += action.body.text;
    } else if (last?.path === 'scroll' && action.path === 'scroll') {
      last.body.dx += action.body.dx;
      last.body.dy += action.body.dy;
    } else {
      this.pending.push(action);
    }
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    for (let action = this.pending.shift(); action; action = this.pending.shift()) {
      try {
        await this.perform(action);
      } catch (error) {
        this.onError(error);
      }
    }
    this.running = false;
  }
}
