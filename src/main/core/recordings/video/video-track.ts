import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { isPng, jpegOfPng } from '../../computers/operator.js';
import { BenchtopError } from '../../errors.js';
import { PRIVATE_DIR, PRIVATE_FILE } from '../../store/private-files.js';
import { addBlockDurations } from './block-durations.js';
import { chapterMetadata, type Chapter, type ListEntry } from './concat-files.js';
import { encodePictures, joinVideos, type Size } from './encode.js';
import { FrameLog, type FrameRecord } from './frame-log.js';
import { Segments } from './segments.js';

export type { Chapter } from './concat-files.js';
export { findFfmpeg } from './find-ffmpeg.js';

export type VideoTrackOptions = {
  /** When the recording started (epoch ms): the video's time 0. */
  startedAt: number;
  /** The encoder, asked before each encoding (findFfmpeg); undefined when there is none. */
  ffmpeg: () => Promise<string | undefined>;
  /**
   * Frames encoded into a segment at a time, in the background, once that many more have come
   * (default 300: a minute of a screen changing 5 times a second). Infinity: never.
   */
  segmentFrames?: number;
};

const VIDEO = 'video.webm';
/**
 * A PNG frame (a screenshot) is turned into a JPEG of this quality when the video is encoded
 * (ffmpeg reads a list of pictures of one format); the screencast's own frames are 60.
 */
const PNG_FRAME_QUALITY = 80;
const PARTIAL = 'video.partial.webm';
/** Scratch files of encodings (lists, chapters, the last stretch): removed at each opening. */
const WORK = 'encoding';
/**
 * A first frame this soon after the start is shown from the start: it is the screen the computer
 * had meanwhile (its first frame takes a moment to come), and a video that opens on black shows
 * a black picture until played. A later first frame has black before it: what the screen showed
 * then is not known.
 */
const FIRST_FRAME_LEAD_MS = 1000;

/** Segments are encoded one at a time across all recordings: the machine's cores are for computers. */
let segmentQueue: Promise<unknown> = Promise.resolve();

/**
 * The screen of a recorded computer as a video (VP8 WebM, docs/API.md §13). Frames come only when
 * the screen changes; each is kept on disk as it came (a JPEG, or a screenshot's PNG, turned into
 * a JPEG only when encoded) the moment it comes, with when it came, and
 * encoded with a variable frame rate (a still screen is one frame however long it stays): an idle
 * screen costs no CPU and no disk. Every `segmentFrames` frames are encoded into a segment in the
 * background and their pictures removed, so a long recording's disk stays bounded and its final
 * video is mostly segments joined. A kill loses nothing written: opening the folder again finds
 * every frame and segment.
 */
export class VideoTrack {
  /** Frames on disk not in a segment yet, in order. */
  private readonly pending: FrameRecord[];
  private total: number;
  private last: number | undefined;
  private size: Size | undefined;
  /** Counts every frame taken: a cached render is reused while it stays the same. */
  private version = 0;
  private closed = false;
  private video: string | undefined;
  private videoBytes = 0;
  private partialBytes = 0;
  private rendered: { key: string; result: Promise<string | undefined> } | undefined;
  private finishing: Promise<string | undefined> | undefined;
  /** Encodings of this track, one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  private compaction: Promise<void> | undefined;
  /** Set when a segment could not be encoded: the frames wait for the final encoding. */
  private compactionFailed = false;
  private black: Promise<string> | undefined;
  private log!: FrameLog;

  private constructor(
    private readonly dir: string,
    private readonly options: Required<VideoTrackOptions>,
    private readonly segments: Segments,
  ) {
    this.pending = [];
    this.total = 0;
  }

  /** Opens (or, after a restart, reopens) the frames of the recording in `dir`. */
  static async open(dir: string, options: VideoTrackOptions): Promise<VideoTrack> {
    await rm(join(dir, WORK), { recursive: true, force: true });
    for (const stale of [`${VIDEO}.tmp`, PARTIAL, `${PARTIAL}.tmp`]) {
      await rm(join(dir, stale), { force: true });
    }
    const videoSize = (await stat(join(dir, VIDEO)).catch(() => undefined))?.size;
    const segments = await Segments.open(dir);
    const track = new VideoTrack(dir, { segmentFrames: 300, ...options }, segments);
    const { log, history } = await FrameLog.open(dir, segments.covered, {
      written: (frame) => track.written(frame),
      lost: () => track.total--,
    });
    track.log = log;
    track.last = history.last?.at;
    if (history.first) track.size = evenSize(history.first.w, history.first.h);
    if (videoSize !== undefined) {
      // Finished already (a kill may have come before the pictures were removed).
      track.video = join(dir, VIDEO);
      track.videoBytes = videoSize;
      track.closed = true;
      track.total = history.count;
      await track.removeWork();
    } else {
      track.pending.push(...history.kept);
      track.total = segments.frames + history.kept.length;
      track.scheduleCompaction();
    }
    return track;
  }

  /** Frames kept so far (also those written before a restart). */
  get frames(): number {
    return this.total;
  }

  /** When the newest frame came (epoch ms). */
  get lastFrameAt(): number | undefined {
    return this.last;
  }

  /** Bytes on disk: frames, segments and video. */
  get bytes(): number {
    return this.log.bytes + this.segments.bytes + this.videoBytes + this.partialBytes;
  }

  /**
   * Takes a frame (a JPEG or a PNG of `width`×`height`, the screen since `at`). Synchronous, never
   * throws, never waits: it is written in the background, in order. Ignored once finish() was
   * called.
   */
  add(picture: Buffer, width: number, height: number, at: number = Date.now()): void {
    if (this.closed || picture.length === 0) return;
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) return;
    // Times only go forward, from the start: each frame is shown at least a millisecond.
    const time = Math.max(Math.round(at), this.options.startedAt, (this.last ?? -Infinity) + 1);
    if (!Number.isFinite(time)) return;
    const replaced = this.log.add(picture, {
      at: time,
      w: width,
      h: height,
      ...(isPng(picture) && { png: true as const }),
    });
    if (!replaced) this.total++;
    this.last = time;
    this.size ??= evenSize(width, height);
    this.version++;
  }

  /**
   * Something worth seeing happened though the screen did not change (a task ended): the video
   * so far is rendered again, to the time it is asked for, instead of the one rendered before.
   */
  moved(): void {
    this.version++;
  }

  /** Resolves once the background work due so far is done: frames written, segments encoded. */
  async settled(): Promise<void> {
    for (;;) {
      await this.log.settled();
      if (!this.compaction) return;
      await this.compaction;
    }
  }

  /**
   * A playable WebM from the start to `until` (at least to the newest frame) with the chapters,
   * while the computer runs; cached until a new frame or other chapters. The file's path, or
   * undefined when no frame was ever recorded. Once finished: the final video.
   */
  render(until: number, chapters: Chapter[]): Promise<string | undefined> {
    const key = `${this.version}\n${JSON.stringify(chapters)}`;
    if (this.rendered?.key === key) return this.rendered.result;
    const result = this.exclusive(() => this.renderNow(until, chapters));
    this.rendered = { key, result };
    result.catch(() => {
      if (this.rendered?.result === result) this.rendered = undefined;
    });
    return result;
  }

  /**
   * Writes the final video.webm, lasting `endedAt` − start (the last frame shown until then), and
   * removes the frames' pictures and the segments. Undefined when no frame was ever recorded.
   * Frames added afterwards are ignored; a failed finish can be called again.
   */
  finish(endedAt: number, chapters: Chapter[]): Promise<string | undefined> {
    this.closed = true;
    if (!this.finishing) {
      const finishing = this.exclusive(() => this.finishNow(endedAt, chapters));
      this.finishing = finishing;
      finishing.catch(() => {
        if (this.finishing === finishing) this.finishing = undefined;
      });
    }
    return this.finishing;
  }

  private async renderNow(until: number, chapters: Chapter[]): Promise<string | undefined> {
    await this.log.settled();
    if (this.video) return this.video;
    if (!this.recorded()) return undefined;
    const out = join(this.dir, PARTIAL);
    this.partialBytes = await this.encode(Math.max(until, this.newestAt()), chapters, out);
    return out;
  }

  private async finishNow(endedAt: number, chapters: Chapter[]): Promise<string | undefined> {
    await this.log.settled();
    if (this.video) return this.video;
    this.rendered = undefined;
    if (!this.recorded()) {
      await this.removeWork();
      return undefined;
    }
    const out = join(this.dir, VIDEO);
    this.videoBytes = await this.encode(Math.max(endedAt, this.newestAt()), chapters, out);
    this.video = out;
    await this.removeWork();
    return out;
  }

  /**
   * Encodes the video from the start to `end` into `out` (through a temporary file, so that a
   * reader of the previous one is not disturbed): the segments joined with the frames after them.
   * Returns its size.
   */
  private async encode(end: number, chapters: Chapter[], out: string): Promise<number> {
    const ffmpeg = await this.encoder();
    const workDir = await this.workDir();
    const { startedAt } = this.options;
    const job = {
      ffmpeg,
      workDir,
      out: join(workDir, basename(out)),
      chapters: chapterMetadata(chapters, startedAt, end - startedAt),
    };
    const last = this.segments.list.at(-1);
    if (!last) {
      const entries = await this.pictures(this.pending, startedAt, end, true);
      await encodePictures({ ...job, entries, size: this.size! });
    } else {
      const parts: ListEntry[] = this.segments.list.map((segment) => ({
        file: this.segments.file(segment.k),
        ms: segment.end - segment.start,
      }));
      // The frames after the segments (there always are: a segment ends where the next frame starts).
      if (this.pending.length > 0) {
        const tail = join(workDir, 'tail.webm');
        const entries = await this.pictures(this.pending, last.end, end, true);
        await encodePictures({ ffmpeg, workDir, out: tail, entries, size: this.size! });
        parts.push({ file: tail });
      }
      await joinVideos({ ...job, entries: parts });
    }
    // Each frame gets its duration, so that a seek shows the frame at that time (block-durations).
    if (await addBlockDurations(job.out, `${out}.tmp`)) {
      await rename(`${out}.tmp`, out);
      await rm(job.out);
    } else await rename(job.out, out);
    await chmod(out, PRIVATE_FILE);
    return (await stat(out)).size;
  }

  /**
   * The concat list of `frames`, each shown until the next one (the last until `end`): the
   * first from `start` when it came within FIRST_FRAME_LEAD_MS of it, else black before it;
   * with `closing`, the last frame once more at `end`, so that the video lasts until then.
   */
  private async pictures(
    frames: FrameRecord[],
    start: number,
    end: number,
    closing: boolean,
  ): Promise<ListEntry[]> {
    const entries: ListEntry[] = [];
    const lead = frames[0]!.at - start;
    if (lead > FIRST_FRAME_LEAD_MS) entries.push({ file: await this.blackFile(), ms: lead });
    /** When a frame starts showing: at its time; the first, after a short lead, at the start. */
    const shownFrom = (index: number) =>
      index === 0 && lead > 0 && lead <= FIRST_FRAME_LEAD_MS ? start : frames[index]!.at;
    for (const [index, frame] of frames.entries()) {
      const ms = (frames[index + 1]?.at ?? end) - shownFrom(index);
      entries.push({ file: await this.jpegOf(frame), ...(ms > 0 && { ms }) });
    }
    const last = entries.at(-1)!;
    if (closing && end > shownFrom(frames.length - 1)) entries.push({ file: last.file });
    return entries;
  }

  /**
   * A frame's picture as a JPEG file: its own, or for a PNG one made in the work folder (once:
   * each later render of the video so far takes it from there).
   */
  private async jpegOf(frame: FrameRecord): Promise<string> {
    if (!frame.png) return this.log.path(frame);
    const file = this.converted(frame);
    if (
      await stat(file).then(
        () => true,
        () => false,
      )
    )
      return file;
    const jpeg = await jpegOfPng(await readFile(this.log.path(frame)), {
      quality: PNG_FRAME_QUALITY,
    });
    await writeFile(`${file}.tmp`, jpeg);
    await rename(`${file}.tmp`, file);
    return file;
  }

  private converted(frame: FrameRecord): string {
    return join(this.dir, WORK, `${frame.n}.jpg`);
  }

  private written(frame: FrameRecord): void {
    this.pending.push(frame);
    this.scheduleCompaction();
  }

  private scheduleCompaction(): void {
    if (this.compaction || this.closed || this.compactionFailed) return;
    if (this.pending.length <= this.options.segmentFrames) return;
    const run = segmentQueue.then(() => this.exclusive(() => this.compactOnce()));
    segmentQueue = run.catch(() => undefined);
    this.compaction = run
      .catch(() => {
        this.compactionFailed = true;
      })
      .finally(() => {
        this.compaction = undefined;
        this.scheduleCompaction();
      });
  }

  /** Encodes the oldest `segmentFrames` pending frames into a segment and removes their pictures. */
  private async compactOnce(): Promise<void> {
    const count = this.options.segmentFrames;
    if (this.closed || this.pending.length <= count) return;
    const frames = this.pending.slice(0, count);
    const next = this.pending[count]!;
    const start = this.segments.list.length === 0 ? this.options.startedAt : frames[0]!.at;
    const ffmpeg = await this.encoder();
    const workDir = await this.workDir();
    const entries = await this.pictures(frames, start, next.at, false);
    const segment = { from: frames[0]!.n, to: next.n, frames: count, start, end: next.at };
    await this.segments.append(segment, (out) =>
      encodePictures({ ffmpeg, workDir, out, entries, size: this.size!, background: true }),
    );
    this.pending.splice(0, count);
    await this.log.remove(frames);
    for (const frame of frames) {
      if (frame.png) await rm(this.converted(frame), { force: true });
    }
  }

  private async encoder(): Promise<string> {
    const ffmpeg = await this.options.ffmpeg();
    if (ffmpeg === undefined) {
      throw new BenchtopError(
        'unavailable',
        'No ffmpeg able to encode VP8 video was found, so the recording has no video yet (its frames are kept): install ffmpeg or set recording.ffmpeg_path in settings.',
      );
    }
    return ffmpeg;
  }

  private async workDir(): Promise<string> {
    const workDir = join(this.dir, WORK);
    await mkdir(workDir, { recursive: true, mode: PRIVATE_DIR });
    return workDir;
  }

  /** A black picture, shown before the first frame (scaled and padded to the video's size). */
  private blackFile(): Promise<string> {
    this.black ??= (async () => {
      const file = join(await this.workDir(), 'black.jpg');
      const background = { r: 0, g: 0, b: 0 };
      const jpeg = await sharp({ create: { width: 16, height: 16, channels: 3, background } })
        .jpeg()
        .toBuffer();
      await writeFile(file, jpeg);
      return file;
    })();
    this.black.catch(() => (this.black = undefined));
    return this.black;
  }

  /** Removes what only served to make the video: pictures, segments, partial video, scratch. */
  private async removeWork(): Promise<void> {
    await this.log.removePictures();
    await this.segments.removeAll();
    this.pending.length = 0;
    await rm(join(this.dir, PARTIAL), { force: true });
    this.partialBytes = 0;
    await rm(join(this.dir, WORK), { recursive: true, force: true });
    this.black = undefined;
  }

  /** Whether any frame is on disk, as a picture or in a segment. */
  private recorded(): boolean {
    return this.pending.length > 0 || this.segments.list.length > 0;
  }

  /** When the newest frame on disk came. */
  private newestAt(): number {
    return this.pending.at(-1)?.at ?? this.segments.list.at(-1)!.end;
  }

  private exclusive<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** A frame size rounded up to even numbers (VP8's 4:2:0 pictures). */
function evenSize(width: number, height: number): Size {
  return { width: width + (width % 2), height: height + (height % 2) };
}
