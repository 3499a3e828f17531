import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PRIVATE_DIR, PRIVATE_FILE } from '../../store/private-files.js';
import { appendEntry, readLog } from './append-log.js';

const FrameEntry = z.object({
  n: z.number().int().min(0),
  at: z.number(),
  w: z.number().int().positive(),
  h: z.number().int().positive(),
  /** Its picture is a PNG (a screenshot kept as it was taken); else a JPEG. */
  png: z.literal(true).optional(),
});
/**
 * One frame: its sequence number, when the screen looked like it (epoch ms), its size, and
 * whether its picture is a PNG.
 */
export type FrameRecord = z.infer<typeof FrameEntry>;

/**
 * Frames waiting to be written, at most (≈2 MB of JPEGs at 1280×720, a few times that for
 * screenshots of busy pages): past it, when the disk cannot keep up, the newest frame takes the
 * place of the last waiting one.
 */
const MAX_WAITING = 60;

/** What an earlier run left in the folder. */
export type FrameHistory = {
  /** Frames the index lists, whether their pictures are still there or not. */
  count: number;
  first?: FrameRecord;
  last?: FrameRecord;
  /** Frames from `keepFrom` on whose pictures are on disk, in order. */
  kept: FrameRecord[];
};

type Listener = (frame: FrameRecord) => void;

/**
 * A recording's frames as they came: `frames/<n>.jpg` (or `.png`), and a line of `frames.ndjson`
 * each (`{"n","at","w","h"}`, `"png":true` for a PNG) appended once the picture is complete, so
 * that every frame listed is a frame kept whenever the process is killed. Frames are written in
 * order, in the background.
 */
export class FrameLog {
  private readonly waiting: { frame: FrameRecord; picture: Buffer }[] = [];
  private writing: Promise<void> | undefined;
  private folderMade = false;

  private constructor(
    private readonly dir: string,
    private next: number,
    /** Bytes of each frame's picture on disk, by sequence number. */
    private readonly sizes: Map<number, number>,
    private indexBytes: number,
    private readonly onWritten: Listener,
    private readonly onLost: Listener,
  ) {}

  /**
   * Reads the folder's frames, removing pictures the index does not list (one being written when
   * the process was killed) and those before `keepFrom` (encoded already).
   */
  static async open(
    dir: string,
    keepFrom: number,
    listeners: { written: Listener; lost: Listener },
  ): Promise<{ log: FrameLog; history: FrameHistory }> {
    const index = join(dir, 'frames.ndjson');
    const frames = await readLog(index, FrameEntry);
    const indexBytes = (await stat(index).catch(() => undefined))?.size ?? 0;
    const listed = new Set(frames.filter((frame) => frame.n >= keepFrom).map(fileName));
    const sizes = new Map<number, number>();
    for (const name of await readdir(join(dir, 'frames')).catch(() => [])) {
      const n = /^(\d+)\.(jpg|png)$/.exec(name)?.[1];
      const file = join(dir, 'frames', name);
      if (n !== undefined && listed.has(name)) {
        sizes.set(Number(n), (await stat(file)).size);
      } else {
        await rm(file, { force: true, recursive: true });
      }
    }
    const last = frames.at(-1);
    const log = new FrameLog(
      dir,
      (last?.n ?? -1) + 1,
      sizes,
      indexBytes,
      listeners.written,
      listeners.lost,
    );
    const kept = frames.filter((frame) => sizes.has(frame.n));
    return { log, history: { count: frames.length, first: frames[0], last, kept } };
  }

  /** Bytes on disk: the pictures and the index. */
  get bytes(): number {
    let total = this.indexBytes;
    for (const size of this.sizes.values()) total += size;
    return total;
  }

  /** Where a frame's picture is. */
  path(frame: FrameRecord): string {
    return join(this.dir, 'frames', fileName(frame));
  }

  /**
   * Queues a frame to be written (its picture a JPEG, or a PNG as `frame.png` says); true when
   * it took the place of a waiting one (the disk is behind), so the number of frames kept did
   * not grow.
   */
  add(picture: Buffer, frame: Omit<FrameRecord, 'n'>): boolean {
    if (this.waiting.length >= MAX_WAITING) {
      // The first waiting frame may be being written: the last one is replaced (MAX_WAITING > 1).
      const last = this.waiting[this.waiting.length - 1]!;
      last.frame = { ...frame, n: last.frame.n };
      last.picture = picture;
      return true;
    }
    this.waiting.push({ frame: { ...frame, n: this.next++ }, picture });
    this.writing ??= this.drain();
    return false;
  }

  /** Resolves once every frame added so far is written (or known lost). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Removes the pictures of frames encoded elsewhere (their index lines stay). */
  async remove(frames: FrameRecord[]): Promise<void> {
    for (const frame of frames) {
      await rm(this.path(frame), { force: true });
      this.sizes.delete(frame.n);
    }
  }

  /** Removes every picture (the video is complete); the index stays. */
  async removePictures(): Promise<void> {
    await this.settled();
    await rm(join(this.dir, 'frames'), { recursive: true, force: true });
    this.sizes.clear();
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const { frame, picture } = this.waiting[0]!;
      const file = this.path(frame);
      let written = false;
      try {
        if (!this.folderMade) {
          await mkdir(join(this.dir, 'frames'), { recursive: true, mode: PRIVATE_DIR });
          this.folderMade = true;
        }
        await writeFile(file, picture, { mode: PRIVATE_FILE });
        this.sizes.set(frame.n, picture.length);
        this.indexBytes += await appendEntry(join(this.dir, 'frames.ndjson'), frame);
        written = true;
      } catch {
        // A full or read-only disk: the frame is lost (a picture the index does not list goes too).
        this.sizes.delete(frame.n);
        await rm(file, { force: true }).catch(() => {});
      }
      this.waiting.shift();
      if (written) this.onWritten(frame);
      else this.onLost(frame);
    }
    this.writing = undefined;
  }
}

function fileName(frame: FrameRecord): string {
  return `${frame.n}.${frame.png ? 'png' : 'jpg'}`;
}
