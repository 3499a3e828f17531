import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { text } from 'node:stream/consumers';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { PRIVATE_FILE } from '../store/private-files.js';

/** Entries that are images or media: no text to scrub, and replacing bytes would corrupt them. */
const BINARY = /\.(png|jpe?g|webp|gif|webm|mp4|woff2?|ttf|zip)$/i;

/**
 * Rewrites a zip with every text entry passed through `scrub` (a Playwright trace records typed
 * text, URLs and request bodies as they were). Written beside it and renamed over it, so a
 * failure leaves the original.
 */
export async function scrubZip(path: string, scrub: (text: string) => string): Promise<void> {
  const source = await openZip(path);
  const out = new yazl.ZipFile();
  const written = pipeline(
    out.outputStream,
    createWriteStream(`${path}.tmp`, { mode: PRIVATE_FILE }),
  );
  try {
    for await (const entry of entries(source)) {
      if (entry.fileName.endsWith('/')) continue;
      const stream = await openEntry(source, entry);
      if (BINARY.test(entry.fileName)) {
        out.addReadStream(stream, entry.fileName, { compress: false });
      } else {
        out.addBuffer(Buffer.from(scrub(await text(stream))), entry.fileName);
      }
    }
    out.end();
    await written;
    await rename(`${path}.tmp`, path);
  } catch (error) {
    out.end();
    await written.catch(() => {});
    await rm(`${path}.tmp`, { force: true });
    throw error;
  } finally {
    source.close();
  }
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, zip) =>
      error ? reject(error) : resolve(zip),
    ),
  );
}

export async function* entries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  while (true) {
    const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
      const onEntry = (found: yauzl.Entry) => done(found);
      const onEnd = () => done(undefined);
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const cleanup = () => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
      };
      const done = (found: yauzl.Entry | undefined) => {
        cleanup();
        resolve(found);
      };
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
      zip.readEntry();
    });
    if (!entry) return;
    yield entry;
  }
}

export function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))),
  );
}
