import { execFile } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  readFileSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { addBlockDurations } from '../../src/main/core/recordings/video/block-durations.js';
import {
  findFfmpeg,
  VideoTrack,
  type Chapter,
} from '../../src/main/core/recordings/video/video-track.js';

const run = promisify(execFile);
const FFMPEG = '/usr/bin/ffmpeg';
const T = 1_800_000_000_000;
const folders: string[] = [];
afterAll(() => Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true }))));

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "benchtop video's-"));
  folders.push(dir);
  return dir;
}

type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];

function jpeg([r, g, b]: Rgb, width = 320, height = 240): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

function png([r, g, b]: Rgb, width = 320, height = 240): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
}

function open(dir: string, options: { segmentFrames?: number; ffmpeg?: string } = {}) {
  return VideoTrack.open(dir, {
    startedAt: T,
    ffmpeg: () => Promise.resolve(options.ffmpeg ?? FFMPEG),
    segmentFrames: options.segmentFrames ?? Infinity,
  });
}

type Probe = {
  duration: number;
  frames: { at: number; width: number; height: number }[];
  chapters: { start: number; end: number; title: string }[];
};

/** What ffprobe reads of a video: times in ms from its start. */
async function probe(file: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', [
    ...['-v', 'error', '-of', 'json', '-show_chapters'],
    ...['-show_entries', 'frame=pts_time,width,height:format=duration', file],
  ]);
  const read = JSON.parse(stdout) as {
    format: { duration: string };
    frames: { pts_time: string; width: number; height: number }[];
    chapters: { start_time: string; end_time: string; tags: { title: string } }[];
  };
  const ms = (seconds: string) => Math.round(Number(seconds) * 1000);
  return {
    duration: ms(read.format.duration),
    frames: read.frames.map((f) => ({ at: ms(f.pts_time), width: f.width, height: f.height })),
    chapters: read.chapters.map((c) => ({
      start: ms(c.start_time),
      end: ms(c.end_time),
      title: c.tags.title,
    })),
  };
}

/**
 * The video's frames as stored (ms): when each starts, how long the file says it lasts (0 when it
 * does not say), whether it is a key frame.
 */
async function packets(file: string): Promise<{ at: number; lasts: number; key: boolean }[]> {
  const { stdout } = await run('ffprobe', [
    ...['-v', 'error', '-of', 'json', '-show_entries', 'packet=pts_time,duration_time,flags', file],
  ]);
  const read = JSON.parse(stdout) as {
    packets: { pts_time: string; duration_time?: string; flags: string }[];
  };
  return read.packets.map((packet) => ({
    at: Math.round(Number(packet.pts_time) * 1000),
    lasts: Math.round(Number(packet.duration_time ?? 0) * 1000) || 0,
    key: packet.flags.startsWith('K'),
  }));
}

/**
 * Each frame lasts until the next one starts (a seek shows the frame at that time); the last one
 * has no duration of its own, so the track's nominal 1/30 s applies.
 */
async function expectFramesLastUntilTheNext(file: string): Promise<void> {
  const stored = await packets(file);
  expect(stored.slice(0, -1).map((packet) => packet.lasts)).toEqual(
    stored.slice(1).map((packet, i) => packet.at - stored[i]!.at),
  );
  expect(stored.at(-1)!.lasts).toBe(33);
}

/** The color of the video's pixel (x, y) at `ms` from its start: that of the last frame by then. */
async function colorAt(file: string, ms: number, x: number, y: number): Promise<Rgb> {
  const { stdout } = await run(
    FFMPEG,
    [
      ...['-v', 'error', '-i', file, '-vsync', 'passthrough'],
      ...['-vf', `format=rgb24,crop=1:1:${x}:${y}`, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    ],
    { encoding: 'buffer' },
  );
  const { frames } = await probe(file);
  const shown = frames.findLastIndex((frame) => frame.at <= ms);
  return [stdout[shown * 3]!, stdout[shown * 3 + 1]!, stdout[shown * 3 + 2]!];
}

function expectColor(actual: Rgb, expected: Rgb): void {
  actual.forEach((channel, i) => expect(Math.abs(channel - expected[i]!)).toBeLessThan(40));
}

describe('the video track of a recording', () => {
  it('encodes frames at their real times, black before a late first one, the last held to the end', async () => {
    const dir = await folder();
    const track = await open(dir);
    track.add(await jpeg(RED), 320, 240, T + 1300);
    track.add(await jpeg(GREEN), 320, 240, T + 1800);
    track.add(await jpeg(BLUE), 320, 240, T + 2500);
    expect(track.frames).toBe(3);
    expect(track.lastFrameAt).toBe(T + 2500);

    const video = await track.finish(T + 5000, []);
    expect(video).toBe(join(dir, 'video.webm'));
    const { duration, frames } = await probe(video!);
    expect(Math.abs(duration - 5000)).toBeLessThan(400);
    // One frame a picture (a still screen is not repeated), and one at the end.
    expect(frames.map((frame) => frame.at)).toEqual([0, 1300, 1800, 2500, 5000]);
    expect(frames.every((frame) => frame.width === 320 && frame.height === 240)).toBe(true);
    await expectFramesLastUntilTheNext(video!);
    expect((await packets(video!)).map((packet) => packet.key)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    // More than a second with no frame: what the screen showed is not known.
    expectColor(await colorAt(video!, 500, 160, 120), BLACK);
    expectColor(await colorAt(video!, 1500, 160, 120), RED);
    expectColor(await colorAt(video!, 2000, 160, 120), GREEN);
    expectColor(await colorAt(video!, 4500, 160, 120), BLUE);
    // The pictures are gone; their index stays.
    expect(existsSync(join(dir, 'frames'))).toBe(false);
    expect(readFileSync(join(dir, 'frames.ndjson'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(track.bytes).toBe(statSync(video!).size + statSync(join(dir, 'frames.ndjson')).size);
    // Finished: finishing or rendering again gives the same video, and frames are ignored.
    track.add(await jpeg(WHITE), 320, 240, T + 6000);
    expect(track.frames).toBe(3);
    expect(await track.finish(T + 9000, [])).toBe(video);
    expect(await track.render(T + 9000, [])).toBe(video);
  });

  it('shows a first frame that came within a second from the start: the video opens on it', async () => {
    const dir = await folder();
    const track = await open(dir);
    track.add(await jpeg(RED), 320, 240, T + 300);
    track.add(await jpeg(GREEN), 320, 240, T + 800);
    const video = await track.finish(T + 2000, []);
    const { frames } = await probe(video!);
    expect(frames.map((frame) => frame.at)).toEqual([0, 800, 2000]);
    await expectFramesLastUntilTheNext(video!);
    expectColor(await colorAt(video!, 0, 160, 120), RED);
    expectColor(await colorAt(video!, 500, 160, 120), RED);
    expectColor(await colorAt(video!, 1000, 160, 120), GREEN);

    // Its only frame, and the end there (a computer killed right after it): the video still lasts
    // from the start.
    const only = await open(await folder());
    only.add(await jpeg(BLUE), 320, 240, T + 300);
    const short = await only.finish(T + 300, []);
    expect((await probe(short!)).frames.map((frame) => frame.at)).toEqual([0, 300]);
    expectColor(await colorAt(short!, 100, 160, 120), BLUE);
  });
  it('keeps screenshots’ PNG frames as they came and encodes them among the JPEG ones', async () => {
    const dir = await folder();
    const track = await open(dir, { segmentFrames: 3 });
    const frames: [Rgb, 'png' | 'jpeg'][] = [
      [RED, 'png'],
      [GREEN, 'jpeg'],
      [BLUE, 'png'],
      [WHITE, 'png'],
      [RED, 'jpeg'],
    ];
    for (const [i, [color, format]] of frames.entries()) {
      track.add(await (format === 'png' ? png : jpeg)(color), 320, 240, T + 500 * i);
    }
    await track.settled();
    // Frames 0–2 are a segment; 3 and 4 wait, each in its own format.
    expect(readdirSync(join(dir, 'segments'))).toEqual(['0.webm']);
    expect(readdirSync(join(dir, 'frames')).sort()).toEqual(['3.png', '4.jpg']);
    const index = readFileSync(join(dir, 'frames.ndjson'), 'utf8').trim().split('\n');
    expect(index.map((line) => (JSON.parse(line) as { png?: true }).png ?? false)).toEqual([
      true,
      false,
      true,
      true,
      false,
    ]);

    const partial = await track.render(T + 2500, []);
    expectColor(await colorAt(partial!, 1700, 160, 120), WHITE);
    // Reopened (as after a kill), the PNG frame is found again.
    const again = await open(dir, { segmentFrames: 3 });
    expect(again.frames).toBe(5);
    again.add(await png(GREEN), 320, 240, T + 2600);
    const video = await again.finish(T + 3000, []);
    expect((await probe(video!)).frames.map((frame) => frame.at)).toEqual([
      0, 500, 1000, 1500, 2000, 2600, 3000,
    ]);
    for (const [i, [color]] of frames.entries()) {
      expectColor(await colorAt(video!, 500 * i + 100, 160, 120), color);
    }
    expectColor(await colorAt(video!, 2800, 160, 120), GREEN);
    expect(readdirSync(dir).sort()).toEqual(['frames.ndjson', 'video.webm']);
  });

  it('writes one chapter per action at its time, each until the next', async () => {
    const dir = await folder();
    const track = await open(dir);
    track.add(await jpeg(RED), 320, 240, T + 100);
    track.add(await jpeg(GREEN), 320, 240, T + 1200);
    const chapters: Chapter[] = [
      { at: T + 1200, title: 'type "a=b; #c\\d"' },
      { at: T - 50, title: 'navigate\nhttps://example.com/' },
      { at: T + 700, title: 'click (10, 20)' },
      { at: T + 9000, title: 'after the end' },
    ];
    const video = await track.finish(T + 3000, chapters);
    expect((await probe(video!)).chapters).toEqual([
      { start: 0, end: 700, title: 'navigate https://example.com/' },
      { start: 700, end: 1200, title: 'click (10, 20)' },
      { start: 1200, end: 3000, title: 'type "a=b; #c\\d"' },
    ]);
  });

  it('encodes frames of several sizes at the first one’s size (even), scaled and padded', async () => {
    const dir = await folder();
    const track = await open(dir);
    track.add(await jpeg(RED, 641, 361), 641, 361, T);
    track.add(await jpeg(GREEN, 1280, 720), 1280, 720, T + 400);
    track.add(await jpeg(BLUE, 300, 361), 300, 361, T + 800);
    const video = await track.finish(T + 1200, []);
    const { frames } = await probe(video!);
    expect(frames.map((frame) => frame.at)).toEqual([0, 400, 800, 1200]);
    expect(frames.every((frame) => frame.width === 642 && frame.height === 362)).toBe(true);
    expectColor(await colorAt(video!, 200, 320, 180), RED);
    expectColor(await colorAt(video!, 600, 320, 180), GREEN);
    // The narrow frame is centered, with black at its sides.
    expectColor(await colorAt(video!, 1000, 320, 180), BLUE);
    expectColor(await colorAt(video!, 1000, 20, 180), BLACK);
  });

  it('finds every frame written after an abrupt stop, and goes on from there', async () => {
    const dir = await folder();
    const first = await open(dir);
    const colors = [RED, GREEN, BLUE, WHITE];
    for (const [i, color] of colors.entries()) {
      first.add(await jpeg(color), 320, 240, T + 200 * (i + 1));
    }
    await first.settled();
    // Killed while it wrote a fifth frame: its picture is half there, its index line cut short.
    await writeFile(join(dir, 'frames', '4.jpg'), (await jpeg(RED)).subarray(0, 100));
    appendFileSync(join(dir, 'frames.ndjson'), '{"n":4,"at":18');

    const again = await open(dir);
    expect(again.frames).toBe(4);
    expect(again.lastFrameAt).toBe(T + 800);
    again.add(await jpeg(GREEN), 320, 240, T + 1000);
    expect(again.frames).toBe(5);
    const video = await again.finish(T + 1500, []);
    const { frames } = await probe(video!);
    expect(frames.map((frame) => frame.at)).toEqual([0, 400, 600, 800, 1000, 1500]);
    expectColor(await colorAt(video!, 900, 160, 120), WHITE);
    expectColor(await colorAt(video!, 1200, 160, 120), GREEN);
    const index = readFileSync(join(dir, 'frames.ndjson'), 'utf8').trim().split('\n');
    expect(index.map((line) => (JSON.parse(line) as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
  });

  it('encodes stretches of frames into segments in the background and joins them at the end', async () => {
    const dir = await folder();
    const track = await open(dir, { segmentFrames: 3 });
    const colors = [RED, GREEN, BLUE, WHITE, RED, GREEN, BLUE, WHITE];
    for (const [i, color] of colors.entries()) {
      track.add(await jpeg(color), 320, 240, T + 500 + 250 * i);
    }
    await track.settled();
    // Frames 0–2 and 3–5 are segments (a segment ends where the next frame starts); 6 and 7 wait.
    expect(readdirSync(join(dir, 'segments')).sort()).toEqual(['0.webm', '1.webm']);
    expect(readdirSync(join(dir, 'frames')).sort()).toEqual(['6.jpg', '7.jpg']);
    expect(track.frames).toBe(8);

    const partial = await track.render(T + 3000, []);
    expect(partial).toBe(join(dir, 'video.partial.webm'));
    expect((await probe(partial!)).frames.map((frame) => frame.at)).toEqual([
      0, 750, 1000, 1250, 1500, 1750, 2000, 2250, 3000,
    ]);

    // Reopened (as after a kill), it goes on from its segments and pictures.
    const again = await open(dir, { segmentFrames: 3 });
    expect(again.frames).toBe(8);
    again.add(await jpeg(BLUE), 320, 240, T + 2600);
    const chapters = [
      { at: T + 600, title: 'first' },
      { at: T + 1800, title: 'second' },
    ];
    const video = await again.finish(T + 4000, chapters);
    const { duration, frames, chapters: written } = await probe(video!);
    expect(frames.map((frame) => frame.at)).toEqual([
      0, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2600, 4000,
    ]);
    // Joined from two segments and the frames after them, each beginning with a key frame.
    await expectFramesLastUntilTheNext(video!);
    expect(
      (await packets(video!)).filter((packet) => packet.key).map((packet) => packet.at),
    ).toEqual([0, 1250, 2000]);
    expect(Math.abs(duration - 4000)).toBeLessThan(400);
    expect(written).toEqual([
      { start: 600, end: 1800, title: 'first' },
      { start: 1800, end: 4000, title: 'second' },
    ]);
    for (const [i, color] of colors.entries()) {
      expectColor(await colorAt(video!, 600 + 250 * i, 160, 120), color);
    }
    expectColor(await colorAt(video!, 3000, 160, 120), BLUE);
    expect(readdirSync(dir).sort()).toEqual(['frames.ndjson', 'video.webm']);
  });

  it('renders the video so far once per new frame, chapters or moment marked, sharing concurrent calls', async () => {
    const dir = await folder();
    const runs = join(dir, 'runs.log');
    const counting = join(dir, 'ffmpeg');
    await writeFile(counting, `#!/bin/sh\necho run >> "${runs}"\nexec ${FFMPEG} "$@"\n`);
    chmodSync(counting, 0o755);
    const encodings = () =>
      existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').length - 1 : 0;
    const track = await open(dir, { ffmpeg: counting });
    track.add(await jpeg(RED), 320, 240, T + 100);
    track.add(await jpeg(GREEN), 320, 240, T + 600);

    const chapters = [{ at: T + 100, title: 'click' }];
    const [a, b] = await Promise.all([
      track.render(T + 1000, chapters),
      track.render(T + 1200, chapters),
    ]);
    expect(a).toBe(join(dir, 'video.partial.webm'));
    expect(b).toBe(a);
    expect(encodings()).toBe(1);
    expect((await probe(a!)).duration).toBeGreaterThanOrEqual(1000);
    expect(await track.render(T + 2000, [...chapters])).toBe(a);
    expect(encodings()).toBe(1);

    track.add(await jpeg(BLUE), 320, 240, T + 1500);
    await track.render(T + 2500, chapters);
    expect(encodings()).toBe(2);
    expect((await probe(a!)).frames.map((frame) => frame.at)).toEqual([0, 600, 1500, 2500]);
    await track.render(T + 2500, [...chapters, { at: T + 1500, title: 'type' }]);
    expect(encodings()).toBe(3);
    expect((await probe(a!)).chapters.map((chapter) => chapter.title)).toEqual(['click', 'type']);

    // A still screen after something that ended (a task): asked for later, it lasts till then.
    const typed = [...chapters, { at: T + 1500, title: 'type' }];
    expect(await track.render(T + 4000, typed)).toBe(a);
    expect((await probe(a!)).duration).toBeLessThan(3000);
    track.moved();
    await track.render(T + 4000, typed);
    expect(encodings()).toBe(4);
    expect((await probe(a!)).duration).toBeGreaterThanOrEqual(4000);
  });

  it('has no video when no frame came', async () => {
    const dir = await folder();
    const track = await open(dir);
    expect(await track.render(T + 1000, [])).toBeUndefined();
    expect(await track.finish(T + 1000, [{ at: T, title: 'click' }])).toBeUndefined();
    expect(track.frames).toBe(0);
    expect(existsSync(join(dir, 'video.webm'))).toBe(false);
  });

  it('keeps the frames when there is no encoder, and finishes once there is one', async () => {
    const dir = await folder();
    let ffmpeg: string | undefined = undefined;
    const track = await VideoTrack.open(dir, {
      startedAt: T,
      ffmpeg: () => Promise.resolve(ffmpeg),
      segmentFrames: 1,
    });
    track.add(await jpeg(RED), 320, 240, T);
    track.add(await jpeg(GREEN), 320, 240, T + 500);
    track.add(await jpeg(BLUE), 320, 240, T + 1000);
    await track.settled();
    expect(readdirSync(join(dir, 'frames'))).toHaveLength(3);
    await expect(track.finish(T + 2000, [])).rejects.toThrow(/recording\.ffmpeg_path/);
    ffmpeg = FFMPEG;
    const video = await track.finish(T + 2000, []);
    expect((await probe(video!)).frames.map((frame) => frame.at)).toEqual([0, 500, 1000, 2000]);
  });

  it('rejects with the end of what ffmpeg said when encoding fails', async () => {
    const dir = await folder();
    const failing = join(dir, 'ffmpeg');
    await writeFile(failing, '#!/bin/sh\necho "Unknown encoder \'libvpx\'" >&2\nexit 1\n');
    chmodSync(failing, 0o755);
    const track = await open(dir, { ffmpeg: failing });
    track.add(await jpeg(RED), 320, 240, T);
    await expect(track.render(T + 1000, [])).rejects.toThrow(/Unknown encoder 'libvpx'/);
  });
});

describe('finding ffmpeg', () => {
  it('takes the configured binary, else the one on the PATH, else the packaged one', async () => {
    const dir = await folder();
    const noVp8 = join(dir, 'ffmpeg-without-vp8');
    await writeFile(noVp8, '#!/bin/sh\necho " V..... libx264"\n');
    chmodSync(noVp8, 0o755);
    expect(await findFfmpeg(FFMPEG)).toBe(FFMPEG);
    expect(await findFfmpeg(join(dir, 'missing'))).toBe(FFMPEG);
    expect(await findFfmpeg(noVp8)).toBe(FFMPEG);
    const path = process.env.PATH;
    process.env.PATH = dir;
    try {
      expect(await findFfmpeg(null)).toMatch(/@ffmpeg-installer[/\\].+ffmpeg$/);
    } finally {
      process.env.PATH = path;
    }
  });

  it('encodes with the packaged ffmpeg too', async () => {
    const packaged = (await import('@ffmpeg-installer/ffmpeg')) as { path: string };
    const dir = await folder();
    const track = await open(dir, { ffmpeg: packaged.path, segmentFrames: 2 });
    track.add(await jpeg(RED), 320, 240, T + 200);
    track.add(await jpeg(GREEN), 320, 240, T + 1000);
    track.add(await jpeg(BLUE), 320, 240, T + 1800);
    const video = await track.finish(T + 3000, [{ at: T + 1000, title: 'click' }]);
    const { duration, frames, chapters } = await probe(video!);
    expect(Math.abs(duration - 3000)).toBeLessThan(300);
    // Before ffmpeg 5.0 a picture's time is rounded to 40 ms (these are multiples of it).
    expect(frames.map((frame) => frame.at)).toEqual([0, 1000, 1800, 3000]);
    await expectFramesLastUntilTheNext(video!);
    expect(chapters).toEqual([{ start: 1000, end: 3000, title: 'click' }]);
    expectColor(await colorAt(video!, 1400, 160, 120), GREEN);
  });
});

describe('giving each frame of a WebM its duration', () => {
  /** A WebM of `colors`, each shown for its ms, written by ffmpeg to `out` (a path or pipe:1). */
  async function ffmpegWebm(dir: string, shown: [Rgb, number][], keyEvery: number) {
    const lines = ['ffconcat version 1.0'];
    for (const [i, [color, ms]] of shown.entries()) {
      await writeFile(join(dir, `${i}.jpg`), await jpeg(color));
      lines.push(`file ${i}.jpg`, 'option framerate 1000', `duration ${ms / 1000}`);
    }
    lines.push(`file ${shown.length - 1}.jpg`, 'option framerate 1000');
    await writeFile(join(dir, 'list.ffconcat'), `${lines.join('\n')}\n`);
    await writeFile(
      join(dir, 'chapters.txt'),
      ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=900\ntitle=one\n',
    );
    return [
      ...['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', join(dir, 'list.ffconcat')],
      ...['-f', 'ffmetadata', '-i', join(dir, 'chapters.txt'), '-map', '0:v', '-map_chapters', '1'],
      ...['-vsync', 'vfr', '-pix_fmt', 'yuv420p', '-c:v', 'libvpx', '-deadline', 'realtime'],
      ...['-g', String(keyEvery), '-f', 'webm'],
    ];
  }

  /** The decoded frames' checksums, in order. */
  async function pictures(file: string): Promise<string[]> {
    const { stdout } = await run(FFMPEG, [
      ...['-v', 'error', '-i', file, '-vsync', 'passthrough', '-f', 'framemd5', '-'],
    ]);
    return stdout
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.split(',').at(-1)!.trim());
  }

  it('keeps every frame, time, key frame and chapter, and tells how long each frame lasts', async () => {
    const dir = await folder();
    const shown: [Rgb, number][] = [
      [BLACK, 375],
      [RED, 2000],
      [GREEN, 100],
      [BLUE, 250],
      [WHITE, 50],
      [RED, 600],
    ];
    // A key frame every 3 frames: the rewrite must tell the others apart (ReferenceBlock).
    const input = join(dir, 'in.webm');
    await run(FFMPEG, [...(await ffmpegWebm(dir, shown, 3)), input]);
    const output = join(dir, 'out.webm');
    expect(await addBlockDurations(input, output)).toBe(true);

    const before = await packets(input);
    const after = await packets(output);
    expect(before.every((packet) => packet.lasts === 0)).toBe(true);
    expect(after.map(({ at, key }) => ({ at, key }))).toEqual(
      before.map(({ at, key }) => ({ at, key })),
    );
    expect(after.map((packet) => packet.at)).toEqual([0, 375, 2375, 2475, 2725, 2775, 3375]);
    expect(after.filter((packet) => packet.key).map((packet) => packet.at)).toEqual([
      0, 2475, 3375,
    ]);
    await expectFramesLastUntilTheNext(output);
    expect(await pictures(output)).toEqual(await pictures(input));
    const [was, is] = [await probe(input), await probe(output)];
    expect(is.chapters).toEqual([{ start: 0, end: 900, title: 'one' }]);
    expect(is.duration).toBe(was.duration);
    // A nominal 30 frames a second for tools that want a constant rate (else guessed from the frames).
    const rate = async (file: string) =>
      (
        await run('ffprobe', [
          ...['-v', 'error', '-show_entries', 'stream=r_frame_rate', '-of', 'csv=p=0', file],
        ])
      ).stdout.trim();
    expect(await rate(output)).toBe('30/1');
    // Seeking (through the rewritten Cues) lands on the key frame before the time asked.
    const { stdout } = await run('ffprobe', [
      ...['-v', 'error', '-read_intervals', '2.6%+#1', '-show_entries', 'packet=pts_time'],
      ...['-of', 'csv=p=0', output],
    ]);
    expect(Number(stdout.trim())).toBe(2.475);
  });

  it('leaves a WebM written as a stream (sizes unknown) as it is', async () => {
    const dir = await folder();
    const input = join(dir, 'in.webm');
    const args = await ffmpegWebm(
      dir,
      [
        [RED, 300],
        [GREEN, 300],
      ],
      150,
    );
    const { stdout } = await run(FFMPEG, [...args, 'pipe:1'], { encoding: 'buffer' });
    await writeFile(input, stdout);
    const output = join(dir, 'out.webm');
    expect(await addBlockDurations(input, output)).toBe(false);
    expect(existsSync(output)).toBe(false);
  });

  it('refuses a file that is not a WebM, or one cut short', async () => {
    const dir = await folder();
    const text = join(dir, 'text.webm');
    await writeFile(text, 'not a video at all');
    await expect(addBlockDurations(text, join(dir, 'a.webm'))).rejects.toThrow(/EBML/);
    const input = join(dir, 'in.webm');
    await run(FFMPEG, [
      ...(await ffmpegWebm(
        dir,
        [
          [RED, 300],
          [GREEN, 300],
        ],
        150,
      )),
      input,
    ]);
    const cut = join(dir, 'cut.webm');
    await writeFile(cut, readFileSync(input).subarray(0, statSync(input).size - 40));
    await expect(addBlockDurations(cut, join(dir, 'b.webm'))).rejects.toThrow(/end/);
  });
});
