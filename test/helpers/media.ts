import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
