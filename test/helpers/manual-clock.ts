import type { Clock } from '../../src/main/core/computers/clock.js';

/** A clock that moves only when told: timers run in order as advance() passes their time. */
export class ManualClock implements Clock {
  private time = 1_700_000_000_000;
  private timers: Array<{ at: number; run: () => void }> = [];

  now(): number {
    return this.time;
  }

  schedule(run: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }

  /** Moves time forward by ms, running each timer due on the way at its own time. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = Math.max(this.time, due.at);
      due.run();
    }
    this.time = end;
  }
}
