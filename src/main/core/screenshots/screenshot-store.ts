import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectory } from '../storage-errors.js';

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const COMPUTER = /^comp_[A-Za-z0-9_-]{1,64}$/;

/**
 * Screenshots as files under the data dir, reachable without a key through an unguessable token.
 * They live as long as their computer plus a grace period, and never across a restart.
 */
export class ScreenshotStore {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly dir: string) {}

  /** Clears what an earlier run left: computers do not survive a restart, so neither do their images. */
  async init(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true });
  }

  /** Stores a PNG and returns its URL path. */
  async save(computerId: string, png: Buffer): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    const folder = join(this.dir, computerId);
    await makeDirectory(folder);
    await writeFile(join(folder, `${token}.png`), png);
    return `/screenshots/${computerId}/${token}.png`;
  }

  /** The PNG behind a URL path's parts, or undefined for anything malformed, unknown or gone. */
  async read(computerId: string, file: string): Promise<Buffer | undefined> {
    const token = file.endsWith('.png') ? file.slice(0, -4) : '';
    if (!COMPUTER.test(computerId) || !TOKEN.test(token)) return undefined;
    return readFile(join(this.dir, computerId, `${token}.png`)).catch(() => undefined);
  }

  /** Deletes a computer's screenshots after the grace period. */
  release(computerId: string, afterMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void rm(join(this.dir, computerId), { recursive: true, force: true });
    }, afterMs);
    timer.unref();
    this.timers.add(timer);
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
