import type { ExecExitLine, ExecOutputLine } from '../../../shared/exec.js';
import type { CommandExit, RunningCommand, StreamName } from './exec-runner.js';

export type ExecStreamLine = ExecOutputLine | ExecExitLine;
/** Receives lines; a returned promise asks the command to wait (backpressure) until it settles. */
export type LineListener = (line: ExecStreamLine) => Promise<void> | void;

export type CommandOutcome = {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
  /** A stream was cut at the run's maxOutputLength. */
  truncated: boolean;
};

export type RunOptions = {
  /** Characters of each stream kept for the outcome. */
  maxOutputLength: number;
  /** Characters of output lines kept so a late follower (a retry) gets them from the start. */
  replayLimit: number;
  /** Kill the command this long after its last follower left, unless another one came. */
  killWhenUnwatchedMs?: number;
};

/**
 * One started shell command as its callers see it: output lines to follow (replayed from the
 * start for a late follower), and its outcome. Several requests may share one run (a retry).
 */
export class CommandRun {
  readonly startedAt = Date.now();
  private readonly killer = new AbortController();
  private readonly streams: Record<StreamName, CappedText>;
  private readonly replay: ExecOutputLine[] = [];
  private replayChars = 0;
  private readonly listeners = new Set<LineListener>();
  private command: RunningCommand | undefined;
  private waiting = 0;
  private unwatched: NodeJS.Timeout | undefined;
  private exitLine: ExecExitLine | undefined;
  private settle!: (outcome: CommandOutcome) => void;
  private readonly settled = new Promise<CommandOutcome>((resolve) => (this.settle = resolve));

  constructor(private readonly options: RunOptions) {
    this.streams = {
      stdout: new CappedText(options.maxOutputLength),
      stderr: new CappedText(options.maxOutputLength),
    };
  }

  /** Aborted to kill the command's process group. */
  get killSignal(): AbortSignal {
    return this.killer.signal;
  }

  get finished(): boolean {
    return this.exitLine !== undefined;
  }

  /** Memory held for outcome and replay, in characters. */
  get retainedChars(): number {
    return this.streams.stdout.text.length + this.streams.stderr.text.length + this.replayChars;
  }

  kill(): void {
    this.killer.abort();
  }

  attach(command: RunningCommand): void {
    this.command = command;
  }

  output(stream: StreamName, text: string): void {
    const line: ExecOutputLine = { type: stream, data: text };
    this.streams[stream].append(text);
    if (this.replayChars + text.length <= this.options.replayLimit) {
      this.replay.push(line);
      this.replayChars += text.length;
    }
    this.emit(line);
  }

  finish(exit: CommandExit): CommandOutcome {
    clearTimeout(this.unwatched);
    this.exitLine = { type: 'exit', code: exit.exitCode };
    this.emit(this.exitLine);
    this.listeners.clear();
    const { stdout, stderr } = this.streams;
    const outcome = {
      stdout: stdout.text,
      stderr: stderr.text,
      exitCode: exit.exitCode,
      timedOut: exit.timedOut,
      truncated: stdout.truncated || stderr.truncated,
    };
    this.settle(outcome);
    return outcome;
  }

  outcome(): Promise<CommandOutcome> {
    return this.settled;
  }

  /**
   * Delivers the output so far, then each line as it comes, ending with the exit line. Settles
   * at the exit or when `signal` aborts (the follower left). Output beyond the replay limit is
   * not replayed: a late follower then misses the middle of a very long output.
   */
  follow(listener: LineListener, signal: AbortSignal): Promise<void> {
    for (const line of this.replay) void listener(line);
    if (this.exitLine) {
      void listener(this.exitLine);
      return Promise.resolve();
    }
    this.listeners.add(listener);
    clearTimeout(this.unwatched);
    return new Promise((resolve) => {
      const leave = () => {
        if (this.listeners.delete(listener)) this.whenUnwatched();
        resolve();
      };
      if (signal.aborted) return leave();
      signal.addEventListener('abort', leave, { once: true });
      void this.settled.then(() => {
        signal.removeEventListener('abort', leave);
        resolve();
      });
    });
  }

  private whenUnwatched(): void {
    const grace = this.options.killWhenUnwatchedMs;
    if (grace === undefined || this.listeners.size > 0 || this.finished) return;
    this.unwatched = setTimeout(() => this.kill(), grace);
  }

  private emit(line: ExecStreamLine): void {
    for (const listener of this.listeners) {
      let pending: Promise<void> | void;
      try {
        pending = listener(line);
      } catch {
        // A broken follower (its connection gone) loses its own lines, nobody else's.
        this.listeners.delete(listener);
        continue;
      }
      if (pending) this.holdUntil(pending);
    }
  }

  /** Stops reading the command's output until every slow follower has caught up. */
  private holdUntil(pending: Promise<void>): void {
    if (this.waiting++ === 0) this.command?.pause();
    void pending.finally(() => {
      if (--this.waiting === 0) this.command?.resume();
    });
  }
}

/** Text that keeps at most `limit` characters and says whether it dropped any. */
class CappedText {
  text = '';
  truncated = false;

  constructor(private readonly limit: number) {}

  append(piece: string): void {
    const room = this.limit - this.text.length;
    if (piece.length <= room) {
      this.text += piece;
      return;
    }
    this.truncated = true;
    if (room > 0) this.text += truncateText(piece, room);
  }
}

/** The first `length` characters, one fewer when the cut would split a surrogate pair. */
export function truncateText(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}
