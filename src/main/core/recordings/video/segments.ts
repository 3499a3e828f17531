import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PRIVATE_DIR, PRIVATE_FILE } from '../../store/private-files.js';
import { appendEntry, readLog } from './append-log.js';

const SegmentEntry = z.object({
  k: z.number().int().min(0),
  /** The sequence number of its first frame. */
  from: z.number().int().min(0),
  /** The sequence number of the frame after its last one (the next segment's first). */
  to: z.number().int().min(0),
  frames: z.number().int().min(1),
  /** What it covers, epoch ms: from its first frame (the recording's start for the first one) to the next frame. */
  start: z.number(),
  end: z.number(),
});
export type SegmentRecord = z.infer<typeof SegmentEntry>;

/**
 * Stretches of a recording's frames encoded already: `segments/<k>.webm`, listed in
 * `segments.ndjson` once complete. A long recording then keeps only its newest frames as
 * pictures, and its video is these joined (no encoding) with the rest.
 */
export class Segments {
  private constructor(
    private readonly dir: string,
    readonly list: SegmentRecord[],
    private sizes: number,
  ) {}

  /** Reads the folder's segments; removes a segment a kill left unfinished or unlisted. */
  static async open(dir: string): Promise<Segments> {
    const index = join(dir, 'segments.ndjson');
    const entries = await readLog(index, SegmentEntry);
    const list: SegmentRecord[] = [];
    let sizes = 0;
    for (const entry of entries) {
      const size = (await stat(segmentFile(dir, entry.k)).catch(() => undefined))?.size;
      if (entry.k !== list.length || size === undefined) break;
      list.push(entry);
      sizes += size;
    }
    // A segment file gone missing: the index is cut there, or the next one would repeat its number.
    if (list.length < entries.length) {
      await writeFile(index, list.map((entry) => `${JSON.stringify(entry)}\n`).join(''), {
        mode: PRIVATE_FILE,
      });
    }
    const listed = new Set(list.map((entry) => `${entry.k}.webm`));
    for (const name of await readdir(join(dir, 'segments')).catch(() => [])) {
      if (!listed.has(name))
        await rm(join(dir, 'segments', name), { force: true, recursive: true });
    }
    return new Segments(dir, list, sizes);
  }

  get bytes(): number {
    return this.sizes;
  }

  /** The sequence number of the first frame no segment holds. */
  get covered(): number {
    return this.list.at(-1)?.to ?? 0;
  }

  /** Frames the segments hold. */
  get frames(): number {
    return this.list.reduce((sum, entry) => sum + entry.frames, 0);
  }

  file(k: number): string {
    return segmentFile(this.dir, k);
  }

  /** Encodes the next segment with `encode` (into the file it is given) and lists it. */
  async append(
    segment: Omit<SegmentRecord, 'k'>,
    encode: (out: string) => Promise<void>,
  ): Promise<void> {
    const entry = { k: this.list.length, ...segment };
    const file = this.file(entry.k);
    await mkdir(join(this.dir, 'segments'), { recursive: true, mode: PRIVATE_DIR });
    await encode(`${file}.tmp`);
    await rename(`${file}.tmp`, file);
    const { size } = await stat(file);
    await appendEntry(join(this.dir, 'segments.ndjson'), entry);
    this.list.push(entry);
    this.sizes += size;
  }

  /** Removes every segment (the video is complete). */
  async removeAll(): Promise<void> {
    await rm(join(this.dir, 'segments'), { recursive: true, force: true });
    await rm(join(this.dir, 'segments.ndjson'), { force: true });
    this.list.length = 0;
    this.sizes = 0;
  }
}

function segmentFile(dir: string, k: number): string {
  return join(dir, 'segments', `${k}.webm`);
}
