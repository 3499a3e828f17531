import { DEFAULT_MAX_OUTPUT_LENGTH, type ExecBody } from '../../../shared/exec.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { BenchtopError } from '../errors.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { CommandRun, type CommandOutcome } from './command-run.js';
import {
  groupAlive,
  killProcessGroup,
  resolveCwd,
  startCommand,
  type StreamName,
} from './exec-runner.js';
import { commandKey, RecentCommands } from './recent-commands.js';

/** The endpoint a command came through: a retry only joins a command of the same kind. */
export type CommandKind = 'exec' | 'exec_sync' | 'debug';
export type CommandBody = ExecBody & { max_output_length?: number };

export type StartOptions = {
  /** Carried by the command's events. */
  requestId: string;
  /** The request is a re-sent one (x-stainless-retry-count above 0). */
  retried: boolean;
  /** The field a bad cwd is reported on. */
  cwdParam?: string;
};

export type ShellDeps = {
  events: ComputerEvents;
  execEnabled: () => boolean;
};

/** Output of a streamed command kept for a retry that joins late. */
const REPLAY_LIMIT_CHARS = 16 * 1024 * 1024;
/**
 * A streamed command whose client left is killed after this, not at once: the SDKs re-send a
 * request whose connection failed about half a second later, and that retry should join it.
 */
export const UNWATCHED_GRACE_MS = 2000;

/**
 * Shell commands of computers: on the host, in the computer's workspace, with its
 * environment; output published on the computer's events; re-sent requests de-duplicated.
 */
export class ShellService {
  private readonly recent = new RecentCommands();
  /** Process groups of every command a computer ran, ended with the computer. */
  private readonly groups = new WeakMap<ComputerSession, Map<number, CommandRun>>();

  constructor(private readonly deps: ShellDeps) {}

  /**
   * Starts a command, or returns the one a retry of the same request started. Throws
   * exec_disabled, or invalid_request when the command cannot start (bad cwd).
   */
  async start(
    session: ComputerSession,
    kind: CommandKind,
    body: CommandBody,
    options: StartOptions,
  ): Promise<CommandRun> {
    if (!this.deps.execEnabled()) {
      throw new BenchtopError(
        'exec_disabled',
        'shell commands are switched off in settings (exec.enabled)',
      );
    }
    const key = commandKey(session.id, kind, body);
    const earlier = options.retried ? this.recent.find(key) : undefined;
    if (earlier) return earlier;
    // Remembered before anything is awaited, so a retry arriving meanwhile finds it.
    const run = this.launch(session, kind, body, options);
    this.recent.remember(key, run);
    return run;
  }

  private async launch(
    session: ComputerSession,
    kind: CommandKind,
    body: CommandBody,
    options: StartOptions,
  ): Promise<CommandRun> {
    const cwd = await resolveCwd(session.init.workspace, body.cwd, options.cwdParam);
    const run = new CommandRun({
      maxOutputLength: body.max_output_length ?? DEFAULT_MAX_OUTPUT_LENGTH,
      replayLimit: kind === 'exec' ? REPLAY_LIMIT_CHARS : 0,
      killWhenUnwatchedMs: kind === 'exec' ? UNWATCHED_GRACE_MS : undefined,
    });
    const onOutput = (stream: StreamName, text: string) => {
      run.output(stream, text);
      session.touch();
      this.deps.events.publish(session.id, {
        type: 'exec_output',
        request_id: options.requestId,
        data: Buffer.from(text, 'utf8').toString('base64'),
        is_stderr: stream === 'stderr',
      });
    };
    const env = { ...process.env, ...session.init.env, ...body.env } as Record<string, string>;
    const spec = { command: body.command, cwd, env, timeoutSeconds: body.timeout_seconds };
    const command = await startCommand(spec, onOutput, run.killSignal);
    run.attach(command);
    this.endWithComputer(session, command.pid, run);
    session.touch();
    void command.exited.then((exit) => {
      // An empty group's id can be reused by others; only groups with members left are kept.
      if (!groupAlive(command.pid)) this.groups.get(session)?.delete(command.pid);
      // Published before anyone awaiting the outcome answers, so the event comes first. A debug
      // action's response is the action runner's, like every action's.
      const outcome = run.finish(exit);
      if (kind !== 'debug') this.publishEnd(session, options.requestId, outcome);
      session.touch();
    });
    return run;
  }

  /**
   * Ending the computer ends each command's whole process group, also what a command left running
   * in the background after it exited: nothing a computer started outlives it. One listener per
   * computer, however many commands it ran.
   */
  private endWithComputer(session: ComputerSession, pid: number, run: CommandRun): void {
    let groups = this.groups.get(session);
    if (!groups) {
      const created = new Map<number, CommandRun>();
      groups = created;
      this.groups.set(session, created);
      session.ended.signal.addEventListener(
        'abort',
        () => {
          for (const [group, command] of created) {
            command.kill();
            killProcessGroup(group);
          }
        },
        { once: true },
      );
    }
    groups.set(pid, run);
    if (session.ended.signal.aborted) {
      run.kill();
      killProcessGroup(pid);
    }
  }

  private publishEnd(session: ComputerSession, requestId: string, outcome: CommandOutcome): void {
    const failure = outcome.timedOut
      ? 'the command timed out and was killed'
      : outcome.exitCode === -1
        ? 'the command was killed'
        : undefined;
    this.deps.events.publish(session.id, {
      type: 'action_response',
      request_id: requestId,
      status: failure ? 'error' : 'success',
      ...(failure && { error_message: failure }),
      exit_code: outcome.exitCode,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
    });
  }
}
