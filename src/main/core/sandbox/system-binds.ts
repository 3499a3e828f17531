import { lstat, readdir, readlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The system folders a sandbox sees, read-only: programs and libraries (/usr and, on systems that
 * still have them as folders, /bin, /lib…) and configuration (/etc). Nothing of any user's home,
 * of /var, /run or /tmp.
 */
const SYSTEM_FOLDERS = ['/usr', '/etc'];
const TOP_LEVEL_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Only configuration is scanned for secrets; programs and libraries are world-readable by design. */
const SCANNED = ['/etc'];
const SCAN_LIMIT = 20_000;

/**
 * bubblewrap arguments for the system folders. Inside a sandbox, files owned by the user Benchtop
 * runs as look owned by the sandbox's user; when that is root, /etc/shadow, SSH host keys and the
 * like would become readable. Anything in /etc that other users of the machine may not read is
 * hidden (an empty file or folder in its place), so a sandbox sees what any local user sees.
 * Looked at once per process.
 */
export function systemBinds(): Promise<string[]> {
  scanned ??= scan();
  return scanned;
}
let scanned: Promise<string[]> | undefined;

async function scan(): Promise<string[]> {
  const args: string[] = [];
  for (const folder of SYSTEM_FOLDERS) {
    if (await exists(folder)) args.push('--ro-bind', folder, folder);
  }
  for (const link of TOP_LEVEL_LINKS) {
    const info = await lstat(link).catch(() => undefined);
    if (info?.isSymbolicLink()) args.push('--symlink', await readlink(link), link);
    else if (info?.isDirectory()) args.push('--ro-bind', link, link);
  }
  const hidden: string[] = [];
  for (const root of SCANNED) await findPrivate(root, hidden);
  for (const path of hidden)
    args.push(
      ...(path.endsWith('/') ? ['--tmpfs', path.slice(0, -1)] : ['--ro-bind', '/dev/null', path]),
    );
  return args;
}

/**
 * Read-only binds for a program outside /usr (a browser in /opt or a downloaded Chromium). A
 * folder that is not there (browser.executable_path set wrong) is left out: the desktop starts,
 * and opening its browser says that Chromium is not found.
 */
export function programBinds(executable: string | undefined): string[] {
  if (!executable || executable.startsWith('/usr/')) return [];
  const folder = dirname(executable);
  return ['--ro-bind-try', folder, folder];
}

/** Entries other users may not read: files end as is, folders with a trailing slash. */
async function findPrivate(folder: string, found: string[]): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (found.length >= SCAN_LIMIT) return;
    const path = join(folder, entry.name);
    if (entry.isSymbolicLink()) continue;
    const info = await lstat(path).catch(() => undefined);
    if (!info) continue;
    if (entry.isDirectory()) {
      // A folder others cannot list or enter is hidden whole.
      if ((info.mode & 0o005) !== 0o005) found.push(`${path}/`);
      else await findPrivate(path, found);
    } else if (entry.isFile() && (info.mode & 0o004) === 0) {
      found.push(path);
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}
