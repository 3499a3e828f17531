import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/**
 * A data dir whose disk can be made read-only under a running server, and repaired.
 *
 * Preferred (root, loop devices, ext4): the data dir lives on its own small ext4 file system on a
 * loop device, mounted with errors=remount-ro; `fail()` reports a file-system error through
 * /sys/fs/ext4/<dev>/trigger_fs_error and the kernel remounts it read-only at once, open files
 * included — exactly what a failing disk does. `repair()` unmounts, runs e2fsck and mounts again.
 *
 * Fallback: as root `chmod a-w` stops nothing, so every file and folder gets the immutable
 * attribute (chattr +i), except SQLite's -shm file: SQLite maps it into memory, and a write to a
 * mapped immutable page is answered with SIGBUS, which no program can handle (a disk remounted
 * read-only does not do that; the -shm file holds no data, only the WAL's index). Without root,
 * chmod -R a-w.
 */
export type ReadOnlyDisk = {
  dataDir: string;
  /** How the fault is made, for the report. */
  how: string;
  fail(): void;
  /** Makes the data dir writable again (the server must be closed first for the loop disk). */
  repair(): void;
  cleanup(): void;
};

function run(command: string, args: string[]): { ok: boolean; out: string } {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return {
    ok: result.status === 0,
    out: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`.trim(),
  };
}

function must(command: string, args: string[], okCodes = [0]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (!okCodes.includes(result.status ?? -1)) {
    throw new Error(
      `${command} ${args.join(' ')} failed: ${result.stderr ?? ''}${result.error?.message ?? ''}`,
    );
  }
  return result.stdout.trim();
}

function writable(dir: string): boolean {
  try {
    writeFileSync(join(dir, '.probe'), 'x');
    rmSync(join(dir, '.probe'), { force: true });
    return true;
  } catch {
    return false;
  }
}

export function readOnlyDisk(): ReadOnlyDisk {
  return loopDisk() ?? attributeDisk();
}

function loopDisk(): ReadOnlyDisk | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const base = mkdtempSync(join(tmpdir(), 'benchtop-disk-'));
  const image = join(base, 'disk.img');
  const mount = join(base, 'mnt');
  mkdirSync(mount);
  let device: string | undefined;
  const cleanup = () => {
    // Lazily when busy (a server that failed to close still holds files): never leave a mount.
    if (!run('umount', [mount]).ok) run('umount', ['-l', mount]);
    if (device) run('losetup', ['-d', device]);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    must('truncate', ['-s', '128M', image]);
    must('mkfs.ext4', ['-q', '-F', image]);
    device = must('losetup', ['-f', '--show', image]);
    must('mount', ['-o', 'errors=remount-ro', device, mount]);
    const trigger = `/sys/fs/ext4/${basename(device)}/trigger_fs_error`;
    readFileSync(`/sys/fs/ext4/${basename(device)}/errors_count`);
    const dataDir = join(mount, 'data');
    mkdirSync(dataDir);
    const dev = device;
    return {
      dataDir,
      how: `ext4 on a loop device remounted read-only by the kernel after a reported file-system error (errors=remount-ro, ${trigger})`,
      fail() {
        writeFileSync(trigger, 'benchtop robustness test');
        if (writable(dataDir)) throw new Error(`${mount} is still writable after the error`);
      },
      repair() {
        must('umount', [mount]);
        // 1: errors were corrected, the expected outcome after a reported error.
        must('e2fsck', ['-fy', dev], [0, 1]);
        must('mount', ['-o', 'errors=remount-ro', dev, mount]);
      },
      cleanup,
    };
  } catch {
    cleanup();
    return undefined;
  }
}

function attributeDisk(): ReadOnlyDisk {
  const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-readonly-'));
  const root = process.getuid?.() === 0;
  const set = (on: boolean) => {
    const paths = listTree(dataDir).filter((path) => !path.endsWith('-shm'));
    for (const path of paths) {
      if (root) run('chattr', [on ? '+i' : '-i', path]);
      else run('chmod', [on ? 'a-w' : 'u+w', path]);
    }
  };
  return {
    dataDir,
    how: root
      ? 'chattr +i on every file and folder of the data dir but SQLite -shm (no loop device here)'
      : 'chmod -R a-w',
    fail() {
      set(true);
      if (writable(dataDir)) {
        set(false);
        throw new Error(`could not make ${dataDir} read-only`);
      }
    },
    repair: () => set(false),
    cleanup() {
      set(false);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** dir and every path below it. */
function listTree(dir: string): string[] {
  const out = spawnSync('find', [dir], { encoding: 'utf8' }).stdout;
  return out.split('\n').filter(Boolean);
}
