import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  closeDesktopParts,
  startDesktopParts,
  type DesktopParts,
  type DesktopPartsStart,
} from './start-desktop.js';
import type { WorkerEntry } from './worker-client.js';

/** What a spare must match to become a computer: everything its processes were started with. */
export type SpareShape = Omit<DesktopPartsStart, 'workspace' | 'privateDir' | 'workerEntry'>;

export type DesktopSparesOptions = {
  /** How many to keep ready (desktop.warm_pool). */
  size: number;
  /** Where spares live until taken; emptied at start with the computers' private folders. */
  dir: string;
  /** The shape the next create most likely asks for; undefined: none can be made here. */
  shape: () => Promise<SpareShape | undefined>;
  workerEntry: WorkerEntry;
};

type Spare = {
  shape: SpareShape;
  parts: DesktopParts;
  root: string;
  workspace: string;
  privateDir: string;
  taken: boolean;
};

/**
 * Desktops started ahead of any create, like the browsers' warm pool: a display with its window
 * manager, terminal, sandbox and worker, in folders of its own. A create of the same shape takes
 * one: its folders are renamed to the computer's (the sandbox's mounts and the processes' working
 * folders follow a rename), and another is started behind it. An idle spare uses no CPU; it holds
 * the memory of an idle desktop.
 */
export class DesktopSpares {
  private readonly ready: Spare[] = [];
  private filling: Promise<void> | undefined;
  private closed = false;
  private made = 0;

  constructor(private readonly options: DesktopSparesOptions) {}

  prewarm(): void {
    if (this.options.size > 0) this.fill();
  }

  /**
   * A spare of this shape moved to the computer's folders (`workspace` exists and is empty), or
   * undefined when none is ready. The caller owns what it returns.
   */
  async take(
    shape: SpareShape,
    to: { workspace: string; privateDir: string },
  ): Promise<DesktopParts | undefined> {
    if (this.options.size === 0) return undefined;
    const index = this.ready.findIndex((spare) => sameShape(spare.shape, shape));
    const spare = index < 0 ? undefined : this.ready.splice(index, 1)[0];
    if (!spare) {
      this.fill();
      return undefined;
    }
    spare.taken = true;
    // The next one starts once this one has moved, out of the way of this create.
    try {
      return await this.move(spare, to);
    } finally {
      this.fill();
    }
  }

  private async move(
    spare: Spare,
    to: { workspace: string; privateDir: string },
  ): Promise<DesktopParts | undefined> {
    const { display, worker, sandbox } = spare.parts;
    try {
      await rename(spare.workspace, to.workspace);
      await rename(spare.privateDir, to.privateDir);
      display.relocate(to.privateDir);
      sandbox?.relocate(to);
      await worker.request({ op: 'xauthority', path: display.env.XAUTHORITY! });
    } catch {
      // It could not move (folders on another file system, a worker gone): this create starts
      // a desktop of its own, in folders as the registry made them.
      await this.discard(spare);
      await rm(to.privateDir, { recursive: true, force: true });
      await rm(to.workspace, { recursive: true, force: true });
      await mkdir(to.workspace, { mode: 0o700 });
      return undefined;
    }
    await rm(spare.root, { recursive: true, force: true });
    return spare.parts;
  }

  /** Resolves when as many spares are ready as can be (for benchmarks that time warm creates). */
  async whenWarm(): Promise<void> {
    while (this.filling) await this.filling;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.whenWarm();
    await Promise.all(this.ready.splice(0).map((spare) => this.discard(spare)));
  }

  private fill(): void {
    if (this.filling || this.closed) return;
    this.filling = (async () => {
      // A spare that cannot start is not an error anyone asked about: the next create starts
      // its own desktop and reports why it cannot.
      const shape = await this.options.shape().catch(() => undefined);
      if (!shape) return;
      // Settings changed since they started (a sandbox switched off, commands allowed): they
      // would never be taken.
      for (const stale of this.ready.filter((spare) => !sameShape(spare.shape, shape))) {
        this.ready.splice(this.ready.indexOf(stale), 1);
        await this.discard(stale);
      }
      while (!this.closed && this.ready.length < this.options.size) {
        const spare = await this.start(shape).catch(() => undefined);
        if (!spare) return;
        if (this.closed || spare.taken) await this.discard(spare);
        else this.ready.push(spare);
      }
    })().finally(() => (this.filling = undefined));
  }

  private async start(shape: SpareShape): Promise<Spare> {
    const root = join(this.options.dir, String(++this.made));
    const workspace = join(root, 'workspace');
    const privateDir = join(root, 'private');
    await mkdir(workspace, { recursive: true, mode: 0o700 });
    try {
      const parts = await startDesktopParts({
        ...shape,
        workspace,
        privateDir,
        workerEntry: this.options.workerEntry,
      });
      const spare: Spare = { shape, parts, root, workspace, privateDir, taken: false };
      // One that dies while it waits is dropped; once taken, its computer watches it.
      const dropIfSpare = () => {
        if (spare.taken) return;
        const index = this.ready.indexOf(spare);
        if (index >= 0) this.ready.splice(index, 1);
        void this.discard(spare);
      };
      parts.display.onExit(dropIfSpare);
      parts.worker.onExit(dropIfSpare);
      parts.sandbox?.onExit(dropIfSpare);
      return spare;
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      throw error;
    }
  }

  private async discard(spare: Spare): Promise<void> {
    spare.taken = true;
    await closeDesktopParts(spare.parts).catch(() => {});
    await rm(spare.root, { recursive: true, force: true });
  }
}

function sameShape(a: SpareShape, b: SpareShape): boolean {
  return (
    a.width === b.width &&
    a.height === b.height &&
    a.sandboxed === b.sandboxed &&
    a.network === b.network &&
    a.terminal === b.terminal &&
    a.browser === b.browser
  );
}
