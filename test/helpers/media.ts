import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';

const run = promisify(execFile);

export type Probe = {
  durationSeconds: number;
  codec: string;
  width: number;
  height: number;
  chapters: Array<{ startSeconds: number; title: string }>;
};

/** What ffprobe says of a video file: duration, first video stream, chapters. */
export async function probe(file: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration:stream=codec_name,width,height',
    '-show_chapters',
    '-of',
    'json',
    file,
  ]);
  const info = JSON.parse(stdout) as {
    format: { duration: string };
    streams: Array<{ codec_name: string; width: number; height: number }>;
    chapters: Array<{ start_time: string; tags?: { title?: string } }>;
  };
  const stream = info.streams[0]!;
  return {
    durationSeconds: Number(info.format.duration),
    codec: stream.codec_name,
    width: stream.width,
    height: stream.height,
    chapters: info.chapters.map((chapter) => ({
      startSeconds: Number(chapter.start_time),
      title: chapter.tags?.title ?? '',
    })),
  };
}

/** Decodes every frame of a video; resolves with how many there were (rejects if it is broken). */
export async function decodeFrames(file: string): Promise<number> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-count_frames',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=nb_read_frames',
    '-of',
    'csv=p=0',
    file,
  ]);
  return Number(stdout.trim());
}

/**
 * Checks a recording's video the way a viewer would find it: every frame decodes and it lasts as
 * long as the recording says (±10 %). Answers what ffprobe says, for the chapters.
 */
export async function expectPlayable(file: string, durationMs: number): Promise<Probe> {
  expect(await decodeFrames(file)).toBeGreaterThan(0);
  const info = await probe(file);
  const seconds = durationMs / 1000;
  expect(info.durationSeconds).toBeGreaterThan(seconds * 0.9);
  expect(info.durationSeconds).toBeLessThan(seconds * 1.1);
  return info;
}

/** The average colour of each frame of a video, in order. */
export async function frameColors(file: string): Promise<Array<[number, number, number]>> {
  const { stdout } = await run(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      'scale=1:1:flags=area',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 24 },
  );
  const colors: Array<[number, number, number]> = [];
  for (let at = 0; at + 3 <= stdout.length; at += 3)
    colors.push([stdout[at]!, stdout[at + 1]!, stdout[at + 2]!]);
  return colors;
}
