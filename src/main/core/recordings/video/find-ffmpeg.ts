import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, join, sep } from 'node:path';
import { runProgram } from '../../runtime/process-supervisor.js';

/** Binaries seen to encode VP8 (a failed check is tried again: ffmpeg may be installed since). */
const able = new Set<string>();

/**
 * Finds the encoder of recordings' videos: the path set in settings (recording.ffmpeg_path),
 * else `ffmpeg` on the PATH, else the binary of the @ffmpeg-installer/ffmpeg package; the first
 * that runs and has VP8 (libvpx). Undefined when none does.
 */
export async function findFfmpeg(configured: string | null): Promise<string | undefined> {
  const candidates: (() => string | undefined | Promise<string | undefined>)[] = [
    () => configured ?? undefined,
    onPath,
    packagedFfmpeg,
  ];
  for (const candidate of candidates) {
    const binary = await candidate();
    if (binary !== undefined && (await encodesVp8(binary))) return binary;
  }
  return undefined;
}

/** Whether `binary` runs as an ffmpeg that lists the libvpx encoder. */
async function encodesVp8(binary: string): Promise<boolean> {
  if (able.has(binary)) return true;
  try {
    const listed = await runProgram(binary, ['-hide_banner', '-encoders'], { timeoutMs: 15_000 });
    if (listed.code !== 0 || !/\blibvpx\b/.test(listed.stdout)) return false;
  } catch {
    return false;
  }
  able.add(binary);
  return true;
}

/** The first executable `ffmpeg` in the PATH's folders. */
async function onPath(): Promise<string | undefined> {
  const name = process.platform === 'win32' ? 'ffmpeg.exe' : 'ffmpeg';
  const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  // An app started from the macOS Finder gets a PATH without Homebrew's folders.
  if (process.platform === 'darwin') folders.push('/opt/homebrew/bin', '/usr/local/bin');
  for (const folder of folders) {
    const file = join(folder, name);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // Not there: the next folder.
    }
  }
  return undefined;
}

/**
 * The binary @ffmpeg-installer/ffmpeg installed for this platform, loaded only now: the package
 * throws when its platform's optional package is missing. Inside a packaged app the binary is
 * read from the unpacked copy of the asar archive (a program cannot run from inside it).
 */
function packagedFfmpeg(): string | undefined {
  try {
    const installer = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as {
      path: string;
    };
    return installer.path.replace(`${sep}app.asar${sep}`, `${sep}app.asar.unpacked${sep}`);
  } catch {
    return undefined;
  }
}
