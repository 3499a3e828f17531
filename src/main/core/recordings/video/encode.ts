import { writeFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { basename, join } from 'node:path';
import { BenchtopError } from '../../errors.js';
import { launch } from '../../runtime/process-supervisor.js';
import { concatList, type ListEntry } from './concat-files.js';

/** The frame size of a video: every frame is scaled and padded to it. */
export type Size = { width: number; height: number };

type Job = {
  ffmpeg: string;
  entries: ListEntry[];
  /** The WebM to write (its name need not end in .webm). */
  out: string;
  /** Where the list and chapter files go. */
  workDir: string;
  /** An ffmetadata file's text: the video's chapters. */
  chapters?: string;
};

const QUIET = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'];
/**
 * VP8 for screens, one thread: realtime speed (≈100 frames of 1280×720 a second on one core),
 * a quality-driven rate (crf) capped at 2 Mbit/s, a key frame at least every 150 frames.
 */
const VP8 = [
  ...['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-threads', '1'],
  ...['-crf', '10', '-b:v', '2M', '-g', '150'],
];
/** The nice level of encoding done in the background. */
const BACKGROUND_NICENESS = 10;

/** ffmpeg binaries found not to know a concat list's `option` lines (those before 5.0). */
const withoutImageRate = new Set<string>();

/**
 * Encodes pictures shown for given times (a variable frame rate: a picture shown for a minute is
 * one frame) into a VP8 WebM of `size`, each scaled to fit and padded with black.
 */
export async function encodePictures(
  job: Job & { size: Size; background?: boolean },
): Promise<void> {
  const imageRate = !withoutImageRate.has(job.ffmpeg);
  const list = join(job.workDir, `${basename(job.out)}.ffconcat`);
  await writeFile(list, concatList(job.entries, imageRate));
  const { width, height } = job.size;
  const fit = [
    `scale=${width}:${height}:force_original_aspect_ratio=decrease`,
    `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:black`,
    'setsar=1',
    'format=yuv420p',
  ].join(',');
  try {
    await runFfmpeg(
      job.ffmpeg,
      [
        ...['-f', 'concat', '-safe', '0', '-i', list],
        ...(await chapterInput(job)),
        ...['-vsync', 'vfr', '-vf', fit, ...VP8, '-f', 'webm', job.out],
      ],
      { timeoutMs: 60_000 + 250 * job.entries.length, background: job.background },
    );
  } catch (error) {
    if (imageRate && String((error as Error).message).includes("unknown keyword 'option'")) {
      withoutImageRate.add(job.ffmpeg);
      return encodePictures(job);
    }
    throw error;
  }
}

/** Joins WebM videos of the same size and codec, one after the other, without encoding. */
export async function joinVideos(job: Job): Promise<void> {
  const list = join(job.workDir, `${basename(job.out)}.ffconcat`);
  await writeFile(list, concatList(job.entries, false));
  await runFfmpeg(
    job.ffmpeg,
    [
      ...['-f', 'concat', '-safe', '0', '-i', list],
      ...(await chapterInput(job)),
      ...['-c', 'copy', '-f', 'webm', job.out],
    ],
    { timeoutMs: 60_000 + 2_000 * job.entries.length },
  );
}

/** The chapters as ffmpeg's second input, or none (any chapters of the first are dropped). */
async function chapterInput(job: Job): Promise<string[]> {
  if (job.chapters === undefined) return ['-map', '0:v', '-map_chapters', '-1'];
  const file = join(job.workDir, `${basename(job.out)}.chapters.txt`);
  await writeFile(file, job.chapters);
  return ['-f', 'ffmetadata', '-i', file, '-map', '0:v', '-map_chapters', '1'];
}

/**
 * Runs ffmpeg to its end through the process supervisor (no encoder outlives Benchtop); rejects
 * with the end of what it wrote to stderr when it fails or runs past `timeoutMs`.
 */
async function runFfmpeg(
  ffmpeg: string,
  args: string[],
  options: { timeoutMs: number; background?: boolean },
): Promise<void> {
  let program;
  try {
    program = await launch(ffmpeg, [...QUIET, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new BenchtopError(
      'unavailable',
      `ffmpeg (${ffmpeg}) could not start: ${(error as Error).message}. Install ffmpeg or set recording.ffmpeg_path in settings.`,
      { cause: error },
    );
  }
  if (options.background) {
    try {
      setPriority(program.pid, BACKGROUND_NICENESS);
    } catch {
      // Already gone, or not allowed: it runs at the normal priority.
    }
  }
  let stderr = '';
  program.child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    program.kill();
  }, options.timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    program.child.once('close', (code: number | null, signal: NodeJS.Signals | null) =>
      resolve([code, signal]),
    ),
  );
  clearTimeout(timer);
  if (code === 0) return;
  const how = timedOut
    ? `ran longer than ${Math.round(options.timeoutMs / 1000)} s and was stopped`
    : `failed (${signal ?? `exit code ${code}`})`;
  throw new BenchtopError(
    'internal',
    `ffmpeg ${how} while encoding the recording's video: ${stderr.trim().slice(-500) || 'it printed nothing'}. Check the ffmpeg Benchtop uses (recording.ffmpeg_path in settings).`,
  );
}
