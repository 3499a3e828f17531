import { readFile } from 'node:fs/promises';
import { buffer as readAll } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import yauzl from 'yauzl';
import { entries, openEntry } from '../scrub-zip.js';

/** A download is read whole to check it for secrets: larger ones stay out of the bundle. */
export const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;
/** What a download may unpack to (a zip's entries, a gzip's content), all levels together. */
const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;
/** A zip in a zip in a zip is looked into; deeper ones are not unpacked further. */
const MAX_DEPTH = 3;

const unzipBuffer = promisify(gunzip);

/** Why a download stays out of a bundle, read by a person in LEFT-OUT.txt. */
export type LeftOut = 'secret' | 'too_large' | 'too_large_unpacked';

/**
 * Whether a downloaded file may go into a bundle as it is: undefined when it may, else why not.
 * `holds` says whether a text holds a secret. A file is the site's, so nothing is scrubbed out of
 * it; it is searched as UTF-8 and UTF-16 text, and so is everything in it that a zip (an office
 * document, an archive) or gzip packs, since an export of an account is rarely plain text.
 */
export async function checkDownload(
  path: string,
  size: number,
  holds: (text: string) => boolean,
  /** The unpacked budget; MAX_UNPACKED_BYTES unless a test says. */
  maxUnpackedBytes = MAX_UNPACKED_BYTES,
): Promise<LeftOut | undefined> {
  if (size > MAX_DOWNLOAD_BYTES) return 'too_large';
  const bytes = await readFile(path);
  const budget = { left: maxUnpackedBytes };
  return look(bytes, holds, budget, 0);
}

async function look(
  bytes: Buffer,
  holds: (text: string) => boolean,
  budget: { left: number },
  depth: number,
): Promise<LeftOut | undefined> {
  if (textsOf(bytes).some(holds)) return 'secret';
  if (depth >= MAX_DEPTH) return undefined;
  const inner = isZip(bytes)
    ? await zipContents(bytes, budget)
    : isGzip(bytes)
      ? await gzipContents(bytes, budget)
      : [];
  if (inner === 'too_large_unpacked') return inner;
  for (const content of inner) {
    const found = await look(content, holds, budget, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The bytes as UTF-8, and as UTF-16 in either byte order (a Windows export, say). */
function textsOf(bytes: Buffer): string[] {
  const even = bytes.subarray(0, bytes.length - (bytes.length % 2));
  return [
    bytes.toString('utf8'),
    even.toString('utf16le'),
    Buffer.from(even).swap16().toString('utf16le'),
  ];
}

const isZip = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50;
const isGzip = (bytes: Buffer) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/**
 * Each entry of a zip, unpacked; 'too_large_unpacked' past the budget (a zip bomb, or simply too
 * much to read). A zip that cannot be read is only searched as it is.
 */
async function zipContents(
  bytes: Buffer,
  budget: { left: number },
): Promise<Buffer[] | 'too_large_unpacked'> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, file) =>
        error ? reject(error) : resolve(file),
      ),
    );
  } catch {
    return [];
  }
  const contents: Buffer[] = [];
  try {
    for await (const entry of entries(zip)) {
      if (entry.fileName.endsWith('/')) continue;
      // yauzl holds an entry to the size its header declares, so a lying header fails the read.
      budget.left -= entry.uncompressedSize;
      if (budget.left < 0) return 'too_large_unpacked';
      contents.push(await readAll(await openEntry(zip, entry)));
    }
  } catch {
    // A damaged zip: what could be read is searched.
  } finally {
    zip.close();
  }
  return contents;
}

async function gzipContents(
  bytes: Buffer,
  budget: { left: number },
): Promise<Buffer[] | 'too_large_unpacked'> {
  try {
    const content = await unzipBuffer(bytes, { maxOutputLength: Math.max(budget.left, 1) });
    budget.left -= content.length;
    return [content];
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
      ? 'too_large_unpacked'
      : [];
  }
}
