import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { invalidRequest } from '../errors.js';
import { groupAlive, launch, type Launched } from '../runtime/process-supervisor.js';

/** The most UTF-8 bytes one output chunk holds (the contract: split at most every 64 KiB). */
export const MAX_CHUNK_BYTES = 64 * 1024;
/**
 * After the shell exits, how long its pipes may stay open while a background process it started
 * (still in its group) holds them: the command is over when the shell is, so we stop reading then.
 */
const PIPE_GRACE_MS = 500;

export type StreamName = 'stdout' | 'stderr';

export type CommandSpec = {
  /** The program that runs the command: `/bin/sh -c command`, or that wrapped into a sandbox. */
  program: { file: string; args: string[] };
  /** An existing directory (see resolveCwd). */
  cwd: string;
  /** The complete environment of the command. */
  env: Record<string, string>;
  timeoutSeconds: number;
};

export type CommandExit = { exitCode: number; timedOut: boolean };

export type RunningCommand = {
  readonly pid: number;
  /** Settles when the shell has exited and its output is delivered. */
  readonly exited: Promise<CommandExit>;
  /** Backpressure: stop reading output until resume(). */
  pause(): void;
  resume(): void;
};

/** Resolves a command's cwd: relative paths live inside the computer's workspace. */
export async function resolveCwd(
  workspace: string,
  cwd: string | undefined,
  param = 'cwd',
): Promise<string> {
  const dir = cwd === undefined ? workspace : isAbsolute(cwd) ? cwd : resolve(workspace, cwd);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw invalidRequest(`cwd ${cwd} is not a directory`, param);
  return dir;
}

/**
 * Starts the command's program as the leader of its own process group, so a timeout or an abort
 * kills everything the command started (exit code -1). Output reaches `onOutput` as it arrives,
 * as UTF-8 text cut at character boundaries, at most MAX_CHUNK_BYTES per call. Resolves once the
 * process runs; a command that cannot start is an invalid_request.
 */
export async function startCommand(
  spec: CommandSpec,
  onOutput: (stream: StreamName, text: string) => void,
  signal: AbortSignal,
): Promise<RunningCommand> {
  const command = await launch(spec.program.file, spec.program.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).catch((error: Error) => {
    throw invalidRequest(`the command could not start: ${error.message}`, 'command');
  });
  const { child, pid } = command;
  const killGroup = () => command.kill();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, spec.timeoutSeconds * 1000);
  if (signal.aborted) killGroup();
  else signal.addEventListener('abort', killGroup, { once: true });
  let over = false;
  const emit = (stream: StreamName) => (text: string) => {
    if (!over) onOutput(stream, text);
  };
  const outputDone = Promise.all([
    deliver(child.stdout!, emit('stdout')),
    deliver(child.stderr!, emit('stderr')),
  ]);
  const exited = command.exited.then(async ({ code }) => {
    clearTimeout(timer);
    signal.removeEventListener('abort', killGroup);
    await untilDrained(command, outputDone);
    over = true;
    return { exitCode: timedOut || code === null ? -1 : code, timedOut };
  });
  const streams = [child.stdout!, child.stderr!];
  return {
    pid,
    exited,
    pause: () => streams.forEach((stream) => stream.pause()),
    resume: () => streams.forEach((stream) => stream.resume()),
  };
}

/**
 * Waits for the pipes to reach their end. Only a live member of the group can hold them open; then
 * they get PIPE_GRACE_MS. The tail is read even when a slow reader paused the output: it is at
 * most what the pipes buffer.
 */
async function untilDrained(command: Launched, outputDone: Promise<unknown>): Promise<void> {
  const { child } = command;
  child.stdout!.resume();
  child.stderr!.resume();
  if (!groupAlive(command.pid)) return void (await outputDone);
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolvePromise) => {
    timer = setTimeout(resolvePromise, PIPE_GRACE_MS);
  });
  await Promise.race([outputDone, grace]);
  clearTimeout(timer);
  child.stdout!.destroy();
  child.stderr!.destroy();
}

/** Decodes a stream as UTF-8 (a character split across reads waits for its rest) and chunks it. */
function deliver(stream: Readable, emit: (text: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  const send = (text: string) => {
    for (const chunk of splitUtf8(text, MAX_CHUNK_BYTES)) emit(chunk);
  };
  return new Promise((resolvePromise) => {
    stream.on('data', (data: Buffer) => send(decoder.write(data)));
    stream.once('close', () => {
      send(decoder.end());
      resolvePromise();
    });
  });
}

/** Cuts text into pieces of at most maxBytes UTF-8 bytes, never inside a character. */
export function splitUtf8(text: string, maxBytes: number): string[] {
  if (text.length === 0) return [];
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes.
  if (text.length * 3 <= maxBytes) return [text];
  const bytes = Buffer.from(text, 'utf8');
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maxBytes, bytes.length);
    // 0b10xxxxxx continues a character: back up to where it began.
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return pieces;
}
