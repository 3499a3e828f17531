import {
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs';
import { join } from 'node:path';
import type { AuthFailures, IpBlock } from './auth-failures.js';

/** What the running server writes: the addresses blocked now (read by `benchtop ip-blocks`). */
export const BLOCKS_FILE = 'ip-blocks.json';
/** What `benchtop ip-blocks lift` writes: addresses to lift; the server lifts them and deletes it. */
export const LIFT_FILE = 'ip-blocks-lift.json';

/**
 * Blocks live in the server's memory; these two files in the data dir let the CLI of the same
 * machine see and lift them — over the file system, since a blocked loopback address cannot
 * reach the server over HTTP.
 */
export class IpBlockFiles {
  private readonly watcher: FSWatcher;

  constructor(
    private readonly dataDir: string,
    private readonly failures: AuthFailures,
  ) {
    failures.onChange = () => this.publish();
    this.publish();
    this.watcher = watch(dataDir, (_event, file) => {
      if (file === LIFT_FILE) this.takeLifts();
    });
    this.watcher.unref();
    this.takeLifts();
  }

  close(): void {
    this.watcher.close();
    attempt(() => rmSync(join(this.dataDir, BLOCKS_FILE), { force: true }));
  }

  /**
   * Blocks are enforced in memory; the file only shows them to the CLI. A data dir that cannot
   * be written must not turn a refused key into a 500, nor stop a shutdown.
   */
  private publish(): void {
    attempt(() => writeAtomically(join(this.dataDir, BLOCKS_FILE), this.failures.blocks()));
  }

  private takeLifts(): void {
    const path = join(this.dataDir, LIFT_FILE);
    if (!existsSync(path)) return;
    let request: { ips?: unknown };
    try {
      request = JSON.parse(readFileSync(path, 'utf8')) as { ips?: unknown };
    } catch {
      return; // Half written: the rename that completes it fires the watcher again.
    }
    // Runs in a file watcher's callback, where a throw would end the process.
    if (!attempt(() => rmSync(path, { force: true }))) return;
    const ips = Array.isArray(request.ips) ? request.ips.map(String) : [];
    const all = ips.includes('*');
    for (const block of this.failures.blocks()) {
      if (all || ips.includes(block.ip)) this.failures.lift(block.ip);
    }
    this.publish();
  }
}

/** Runs work; false when it threw (the disk refused it). */
function attempt(work: () => void): boolean {
  try {
    work();
    return true;
  } catch {
    return false;
  }
}

export function writeAtomically(path: string, value: unknown): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}

/** The blocks a running server published (expired ones left out). */
export function readBlocks(dataDir: string): IpBlock[] {
  try {
    const blocks = JSON.parse(readFileSync(join(dataDir, BLOCKS_FILE), 'utf8')) as IpBlock[];
    return blocks.filter((block) => Date.parse(block.until) > Date.now());
  } catch {
    return [];
  }
}
