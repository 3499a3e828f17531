import { mkdir } from 'node:fs/promises';
import { BenchtopError } from './errors.js';

const FS_PROBLEMS: Record<string, string> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EIO: 'input/output error',
};

/** Calls that touch files: an EPERM from process.kill or a socket is no storage problem. */
const FS_CALLS = new Set([
  'open',
  'write',
  'writev',
  'read',
  'close',
  'mkdir',
  'mkdtemp',
  'rename',
  'unlink',
  'rmdir',
  'rm',
  'copyfile',
  'cp',
  'fsync',
  'fdatasync',
  'ftruncate',
  'utime',
  'futime',
  'chmod',
  'symlink',
  'link',
  'scandir',
]);

/**
 * What went wrong with the data dir's disk, in words, when error is such a failure (a file
 * system call refused for lack of permission, space or a writable disk, or SQLite unable to
 * write its file); undefined for any other error.
 */
export function storageProblem(error: unknown): string | undefined {
  const { code, syscall, path, message } = (error ?? {}) as {
    code?: unknown;
    syscall?: unknown;
    path?: unknown;
    message?: unknown;
  };
  if (typeof code !== 'string') return undefined;
  if (code in FS_PROBLEMS && typeof syscall === 'string' && FS_CALLS.has(syscall)) {
    return `${FS_PROBLEMS[code]} (${code}, ${syscall}${typeof path === 'string' ? ` ${path}` : ''})`;
  }
  // better-sqlite3 names SQLite's extended result codes.
  if (/^SQLITE_(IOERR|READONLY|FULL|CANTOPEN)/.test(code)) {
    return `${String(message)} in its database benchtop.sqlite (${code})`;
  }
  return undefined;
}

/** One sentence for a person: what failed, why, and what to check. */
export function storageMessage(what: string, problem: string): string {
  return `Benchtop could not ${what}: ${problem}; check that its data dir is writable and has free space`;
}

/** error as a 503 that says what could not be stored and why, when the disk refused; else as is. */
export function asStorageError(what: string, error: unknown): unknown {
  const problem = storageProblem(error);
  return problem ? new BenchtopError('unavailable', storageMessage(what, problem)) : error;
}

/**
 * mkdir -p that reports why it failed: Node answers a recursive mkdir the file system refuses
 * (read-only) with ENOENT, which reads as a missing path; the plain call then names the refusal.
 * Every folder it makes is in the data dir, so readable by this user only.
 */
export async function makeDirectory(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(path, 0o700).catch((plain: NodeJS.ErrnoException) => {
      throw plain.code === 'ENOENT' ? error : plain;
    });
  }
}
