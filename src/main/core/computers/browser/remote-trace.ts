import { writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';
import { PRIVATE_FILE } from '../../store/private-files.js';

/**
 * Unpacks the trace a remote browser's tracing sent back (tracing.stop({path})) into a part's
 * files, as a local browser's tracing writes them in the tracesDir: `<part>.trace` and
 * `<part>.network`. The trace is then zipped with the computer's other parts.
 */
export async function unpackRemoteTrace(zipPath: string, part: string): Promise<void> {
  const wanted: Record<string, string> = {
    'trace.trace': `${part}.trace`,
    'trace.network': `${part}.network`,
  };
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zipPath, { lazyEntries: true }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  );
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      const target = wanted[entry.fileName];
      if (!target) {
        zip.readEntry();
        return;
      }
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        buffer(stream)
          .then((content) => writeFile(target, content, { mode: PRIVATE_FILE }))
          .then(() => zip.readEntry(), reject);
      });
    });
    zip.readEntry();
  });
}
