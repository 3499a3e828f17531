import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ComputerDownload } from '../../../shared/computers.js';
import { notFound } from '../errors.js';
import type { DownloadFolder } from './operator.js';

/**
 * A folder of downloaded files, as GET /computers/{id}/downloads shows it: whole files only.
 * Hidden names are files still being written (`.name.part`), as is Chromium's own `.crdownload`
 * (a CDP client that sets its own download behaviour has Chromium write here directly).
 */
export class DownloadDir implements DownloadFolder {
  constructor(readonly dir: string) {}

  /** Whole files, oldest first. */
  async list(): Promise<ComputerDownload[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const files = await Promise.all(
      names
        .filter((name) => !name.startsWith('.') && !name.endsWith('.crdownload'))
        .map(async (name) => {
          const info = await stat(join(this.dir, name)).catch(() => undefined);
          return info?.isFile()
            ? { name, size_bytes: info.size, created_at: info.mtime.toISOString() }
            : undefined;
        }),
    );
    return files
      .filter((file): file is ComputerDownload => file !== undefined)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name));
  }

  /** The path of one listed file; a name that is not one is a 404 naming what there is. */
  async path(name: string): Promise<string> {
    const files = await this.list();
    if (files.some((file) => file.name === name)) return join(this.dir, name);
    const known = files.length ? files.map((file) => file.name).join(', ') : 'none yet';
    throw notFound(`this computer downloaded no file named "${name}" (downloads: ${known})`);
  }
}
