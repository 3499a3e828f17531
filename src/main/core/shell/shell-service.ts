import { realpath, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { DEFAULT_MAX_OUTPUT_LENGTH, type ExecBody } from '../../../shared/exec.js';
import type { ComputerSession } from '../computers/computer-session.js';
import { invalidRequest } from '../errors.js';
import {
  SANDBOX_WORKSPACE,
  sandboxEnv,
  type ComputerSandbox,
} from '../sandbox/computer-sandbox.js';
import type { OrganizationPolicy } from '../sandbox/organization-policy.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { CommandRun, type CommandOutcome } from './command-run.js';
import { groupAlive, killGroup } from '../runtime/process-supervisor.js';
import { resolveCwd, startCommand, type CommandSpec, type StreamName } from './exec-runner.js';
import { commandKey, RecentCommands } from './recent-commands.js';

/** The endpoint a command came through: a retry only joins a command of the same kind. */
export type CommandKind = 'exec' | 'exec_sync' | 'debug';
export type CommandBody = ExecBody & { max_output_length?: number };

export type StartOptions = {
  /** Carried by the command's events. */
  requestId: string;
  /** The request is a re-sent one (x-stainless-retry-count above 0). */
  retried: boolean;
};

export type ShellDeps = {
  events: ComputerEvents;
  /** Who may run commands, and the sandbox a computer's commands run in. */
  policy: Pick<OrganizationPolicy, 'checkExec' | 'sandboxOf'>;
  /** The environment of a command run on the host: Benchtop's own, without its secrets. */
  hostEnv: () => Record<string, string>;
};

/** Output of a streamed command kept for a retry that joins late. */
const REPLAY_LIMIT_CHARS = 16 * 1024 * 1024;
/**
 * A streamed command whose client left is killed after this, not at once: the SDKs re-send a
 * request whose connection failed about half a second later, and that retry should join it.
 */
const UNWATCHED_GRACE_MS = 2000;

/**
 * Shell commands of computers: in the computer's sandbox (or, for an owner who chose so, on the
 * host), in its workspace, with its environment; output published on the computer's events;
 * re-sent requests de-duplicated.
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
    this.deps.policy.checkExec(session.org);
    const key = commandKey(session.id, kind, body);
    const earlier = options.retried ? this.recent.find(key) : undefined;
    if (earlier) return earlier;
    // Remembered before anything is awaited, so a retry arriving meanwhile finds it.
    const run = this.launch(session, kind, body, options);
    this.recent.remember(key, run);
    return run;
  }

  /** Whether a retry of this command would join a run of it that started. */
  joinable(session: ComputerSession, kind: CommandKind, body: CommandBody): boolean {
    return this.recent.find(commandKey(session.id, kind, body)) !== undefined;
  }

  private async launch(
    session: ComputerSession,
    kind: CommandKind,
    body: CommandBody,
    options: StartOptions,
  ): Promise<CommandRun> {
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
    let spec: CommandSpec | undefined;
    try {
      spec = await this.commandSpec(session, body);
    } catch (error) {
      if (!session.ended.signal.aborted) throw error;
    }
    if (!spec || session.ended.signal.aborted) {
      // The computer ended while the command was being prepared (its sandbox starting): it
      // answers as a command killed with its computer, having never run.
      const outcome = run.finish({ exitCode: -1, timedOut: false });
      if (kind !== 'debug') this.publishEnd(session, options.requestId, outcome);
      return run;
    }
    const command = await startCommand(spec, onOutput, run.killSignal);
    run.attach(command);
    this.endWithComputer(session, command.pid, run);
    session.touch();
    void command.exited.then((exit) => {
      // An empty group's id can be reused by others; only groups with members left are kept.
      if (!groupAlive(command.pid)) this.groups.get(session)?.delete(command.pid);
      // Published before anyone awaiting the outcome answers, so the event comes first. A debug
      // action's response is the action runner's, like every action's.
      // A command whose computer ended was killed with it, whichever process noticed first (the
      // sandbox going away can make the joining process exit with its own error code).
      const ended = session.ended.signal.aborted;
      const outcome = run.finish(ended ? { exitCode: -1, timedOut: exit.timedOut } : exit);
      if (kind !== 'debug') this.publishEnd(session, options.requestId, outcome);
      session.touch();
    });
    return run;
  }

  /** Where and how the command runs: in the computer's sandbox, or on the host for the owner. */
  private async commandSpec(session: ComputerSession, body: CommandBody): Promise<CommandSpec> {
    const sandbox = await this.deps.policy.sandboxOf(session);
    // A bad cwd is an error about the command body's `cwd`.
    const inSandbox = sandbox && (await sandboxCwd(sandbox, body.cwd));
    const cwd = inSandbox ? inSandbox.cwd : await resolveCwd(session.spec.workspace, body.cwd);
    const own = { ...session.spec.env, ...body.env };
    return {
      program: inSandbox
        ? // The sandbox's own paths: the command starts in its cwd as the sandbox sees it.
          inSandbox.sandbox.wrap('/bin/sh', ['-c', body.command], inSandbox.inside)
        : { file: '/bin/sh', args: ['-c', body.command] },
      cwd,
      env: inSandbox ? sandboxEnv(own) : { ...this.deps.hostEnv(), ...own },
      timeoutSeconds: body.timeout_seconds,
    };
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
            killGroup(group);
          }
        },
        { once: true },
      );
    }
    groups.set(pid, run);
    if (session.ended.signal.aborted) {
      run.kill();
      killGroup(pid);
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

/**
 * A sandboxed command's cwd: relative paths are inside /workspace; absolute ones must be in the
 * workspace or the sandbox's /tmp, checked on the host after following links, so a link in the
 * workspace cannot make the check look at a folder the sandbox does not have.
 */
async function sandboxCwd(
  sandbox: ComputerSandbox,
  cwd: string | undefined,
): Promise<{ sandbox: ComputerSandbox; cwd: string; inside: string }> {
  const inside = posix.resolve(SANDBOX_WORKSPACE, cwd ?? '.');
  const host = sandbox.hostPath(inside);
  const real = host && (await realpath(host).catch(() => undefined));
  const roots = [await realpath(sandbox.hostPath(SANDBOX_WORKSPACE)!), await realpath(sandbox.tmp)];
  const within = real && roots.some((root) => real === root || real.startsWith(`${root}/`));
  const info = within ? await stat(real).catch(() => undefined) : undefined;
  if (!info?.isDirectory()) {
    throw invalidRequest(
      `cwd ${cwd ?? SANDBOX_WORKSPACE} is not a directory of this computer (its files are under /workspace and /tmp)`,
      'cwd',
    );
  }
  return { sandbox, cwd: real!, inside };
}
