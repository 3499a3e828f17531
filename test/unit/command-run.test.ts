import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CommandRun } from '../../src/main/core/shell/command-run.js';

const GRACE_MS = 2000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function follow(run: CommandRun) {
  const leave = new AbortController();
  const lines: unknown[] = [];
  const done = run.follow((line) => void lines.push(line), leave.signal);
  return { lines, done, leave: () => leave.abort() };
}

describe('CommandRun: a command nobody follows', () => {
  const start = () =>
    new CommandRun({ maxOutputLength: 1000, replayLimit: 1000, killWhenUnwatchedMs: GRACE_MS });

  it('is killed once its last follower has been gone for the grace period', async () => {
    const run = start();
    const first = follow(run);
    const second = follow(run);
    first.leave();
    await first.done;
    vi.advanceTimersByTime(GRACE_MS * 5);
    expect(run.killSignal.aborted).toBe(false);
    second.leave();
    await second.done;
    vi.advanceTimersByTime(GRACE_MS - 1);
    expect(run.killSignal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(run.killSignal.aborted).toBe(true);
  });

  it('is kept when a follower (a retry) comes within the grace period, and replayed from the start', async () => {
    const run = start();
    const first = follow(run);
    run.output('stdout', 'a\n');
    first.leave();
    await first.done;
    vi.advanceTimersByTime(GRACE_MS - 1);
    const retry = follow(run);
    vi.advanceTimersByTime(GRACE_MS * 5);
    expect(run.killSignal.aborted).toBe(false);
    run.output('stdout', 'b\n');
    run.finish({ exitCode: 0, timedOut: false });
    await retry.done;
    expect(retry.lines).toEqual([
      { type: 'stdout', data: 'a\n' },
      { type: 'stdout', data: 'b\n' },
      { type: 'exit', code: 0 },
    ]);
  });

  it('is never killed for want of followers once it has ended, or when no grace is set', async () => {
    const ended = start();
    const follower = follow(ended);
    ended.finish({ exitCode: 0, timedOut: false });
    await follower.done;
    follower.leave();
    vi.advanceTimersByTime(GRACE_MS * 5);
    expect(ended.killSignal.aborted).toBe(false);

    const sync = new CommandRun({ maxOutputLength: 1000, replayLimit: 1000 });
    const gone = follow(sync);
    gone.leave();
    await gone.done;
    vi.advanceTimersByTime(GRACE_MS * 5);
    expect(sync.killSignal.aborted).toBe(false);
  });
});
