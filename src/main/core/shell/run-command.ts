import { spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { invalidRequest } from '../errors.js';

export type CommandSpec = {
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutSeconds: number;
  maxOutputLength: number;
};

export type CommandOutcome = {
  stdout: string;
  stderr: string;
  exit_code: number;
  truncated: boolean;
  timed_out: boolean;
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
 * Runs a shell command in its own process group and collects its output. A timeout or an abort
 * kills the whole group (exit code -1), so nothing the command started outlives it.
 */
export function runCommand(
  spec: CommandSpec & { cwd: string },
  signal?: AbortSignal,
): Promise<CommandOutcome> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('/bin/sh', ['-c', spec.command], {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '', truncated: false };
    const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = spec.maxOutputLength - out[stream].length;
      if (room <= 0) {
        out.truncated = true;
        return;
      }
      const text = chunk.toString('utf8');
      if (text.length > room) out.truncated = true;
      out[stream] += text.slice(0, room);
    };
    child.stdout.on('data', collect('stdout'));
    child.stderr.on('data', collect('stderr'));
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutSeconds * 1000);
    signal?.addEventListener('abort', killGroup, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(invalidRequest(`the command could not start: ${error.message}`, 'command'));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', killGroup);
      resolvePromise({
        ...out,
        exit_code: timedOut || code === null ? -1 : code,
        timed_out: timedOut,
      });
    });
  });
}
