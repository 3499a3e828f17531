import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectory } from '../storage-errors.js';
import { PRIVATE_DIR, PRIVATE_FILE } from '../store/private-files.js';

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
/**
 * The newest screenshots stored are kept in memory too, this many across all computers: a task
 * reads its look back at once (the model's input, the stall check), and ten tasks at once paid
 * two file reads a step for bytes they had just written.
 */
const RECENT = 16;
const COMPUTER = /^comp_[A-Za-z0-9_-]{1,64}$/;

/**
 * Screenshots as files under the data dir, reachable without a key through an unguessable token.
 * They live as long as their computer plus a grace period, and never across a restart. Each
 * computer keeps only its newest `perComputer` (limits.screenshots_per_computer): a client
 * taking screenshots in a loop would otherwise fill the disk within a computer's lifetime, and
 * a model is sent only the newest few of a conversation anyway.
 */
export class ScreenshotStore {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Each computer's stored files, oldest first. */
  private readonly files = new Map<string, string[]>();
  /** The newest files' bytes, oldest first. */
  private readonly recent = new Map<string, Buffer>();
  /** Told of every file stored (the flight recorder keeps a link to it). */
  onSaved: ((computerId: string, file: string) => void) | undefined;

  constructor(
    private readonly dir: string,
    private readonly perComputer: () => number = () => Infinity,
  ) {}

  /** Clears what an earlier run left: computers do not survive a restart, so neither do their images. */
  async init(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR });
  }

  /** Stores a PNG and returns its URL path; the computer's oldest ones over the limit go. */
  async save(computerId: string, png: Buffer): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    const folder = join(this.dir, computerId);
    // Made for a computer's first screenshot (and again if it went): one system call fewer, and
    // one turn of the event loop, for each screenshot after it.
    if (!this.files.has(computerId)) await makeDirectory(folder);
    const file = join(folder, `${token}.png`);
    await writeFile(file, png, { mode: PRIVATE_FILE }).catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await makeDirectory(folder);
      await writeFile(file, png, { mode: PRIVATE_FILE });
    });
    this.onSaved?.(computerId, file);
    this.recent.set(file, png);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.keys().next().value!);
    const files = this.files.get(computerId) ?? [];
    files.push(file);
    this.files.set(computerId, files);
    const over = files.splice(0, Math.max(0, files.length - this.perComputer()));
    for (const old of over) this.recent.delete(old);
    await Promise.all(over.map((old) => rm(old, { force: true }).catch(() => {})));
    return `/screenshots/${computerId}/${token}.png`;
  }

  /** The PNG behind a URL path's parts, or undefined for anything malformed, unknown or gone. */
  async read(computerId: string, file: string): Promise<Buffer | undefined> {
    const token = file.endsWith('.png') ? file.slice(0, -4) : '';
    if (!COMPUTER.test(computerId) || !TOKEN.test(token)) return undefined;
    const path = join(this.dir, computerId, `${token}.png`);
    return this.recent.get(path) ?? readFile(path).catch(() => undefined);
  }

  /** Deletes a computer's screenshots after the grace period. */
  release(computerId: string, afterMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      for (const file of this.files.get(computerId) ?? []) this.recent.delete(file);
      this.files.delete(computerId);
      void rm(join(this.dir, computerId), { recursive: true, force: true });
    }, afterMs);
    timer.unref();
    this.timers.add(timer);
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.recent.clear();
  }
}
