import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { appendFile, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BrowserContext } from 'playwright-core';
import yazl from 'yazl';
import { PRIVATE_DIR, PRIVATE_FILE } from '../../store/private-files.js';
import { unpackRemoteTrace } from './remote-trace.js';

/** The Playwright trace of a recorded browser computer, in its recording's folder. */
export const TRACE_FILE = 'trace.zip';
/** Where each context's tracing writes as it goes (one line each), for recoverTrace after a kill. */
const PARTS_FILE = 'trace.parts';

/** How long the end of a trace may wait for what a context still has in flight. */
const STOP_WAIT_MS = 2000;
/** The same for a remote browser, whose trace also travels back over its connection. */
const REMOTE_STOP_WAIT_MS = 10_000;
/**
 * Tracing options: the actions and their parameters, console messages and page errors, without
 * DOM snapshots (which nearly double what a click costs) or screenshots (the recording has a
 * video) or sources (Benchtop's own code).
 */
const TRACING = { screenshots: false, snapshots: false, sources: false } as const;

/**
 * Playwright tracing of one computer. Each context it had (change_proxy rebuilds the context)
 * is traced as one part; the browser's tracesDir holds a part's files while it is written, and
 * trace.zip holds all parts, as the trace viewer reads several contexts from one zip.
 */
export class BrowserTrace {
  private readonly parts: string[] = [];
  private readonly partOf = new WeakMap<BrowserContext, string>();

  constructor(
    private readonly dir: string,
    private readonly tracesDir: string,
    /** The browser runs elsewhere: its tracing writes there, and end() fetches each part. */
    private readonly remote = false,
  ) {}

  /** Traces a context from now on; a context that cannot be traced is left untraced. */
  async start(context: BrowserContext): Promise<void> {
    const name = `${basename(this.dir)}-${randomBytes(4).toString('hex')}`;
    const part = join(this.tracesDir, name);
    // Made here first, private: Playwright appends to them, and would make them readable by all.
    await Promise.all([
      mkdir(join(this.tracesDir, 'resources'), { recursive: true, mode: PRIVATE_DIR }),
      appendFile(`${part}.trace`, '', { mode: PRIVATE_FILE }),
      appendFile(`${part}.network`, '', { mode: PRIVATE_FILE }),
    ]).catch(() => {});
    try {
      await context.tracing.start({ ...TRACING, name, title: basename(this.dir) });
    } catch {
      return;
    }
    this.parts.push(part);
    this.partOf.set(context, part);
    await appendFile(join(this.dir, PARTS_FILE), `${part}\n`, { mode: PRIVATE_FILE }).catch(
      () => {},
    );
  }

  /** Ends the tracing of a context (before it closes): its part is then complete on disk. */
  async end(context: BrowserContext): Promise<void> {
    // A context that died already left what it wrote, which write() zips all the same. One with
    // a request that never answers keeps stop() waiting for that response: it is not waited for
    // longer than STOP_WAIT_MS (the trace has everything up to then).
    let timer: NodeJS.Timeout | undefined;
    const part = this.partOf.get(context);
    await Promise.race([
      this.remote && part ? this.fetchPart(context, part) : context.tracing.stop().catch(() => {}),
      new Promise<void>(
        (resolve) =>
          (timer = setTimeout(resolve, this.remote ? REMOTE_STOP_WAIT_MS : STOP_WAIT_MS)),
      ),
    ]);
    clearTimeout(timer);
  }

  /** A remote context's trace, sent over its connection and unpacked into its part's files. */
  private async fetchPart(context: BrowserContext, part: string): Promise<void> {
    const zipPath = `${part}.zip`;
    try {
      await context.tracing.stop({ path: zipPath });
      await unpackRemoteTrace(zipPath, part);
    } catch {
      // A backend gone with its context leaves no trace of it.
    } finally {
      await rm(zipPath, { force: true });
    }
  }

  /** Writes trace.zip from every part, then removes the parts. */
  async write(): Promise<void> {
    await zipParts(this.dir, this.parts);
  }
}

/**
 * Makes trace.zip of a recording whose Benchtop was killed while it ran, from the files tracing
 * had written (each event is a line; one torn by the kill is left out). Resolves whether the
 * recording has a trace.zip now.
 */
export async function recoverTrace(dir: string): Promise<boolean> {
  const listed = await readFile(join(dir, PARTS_FILE), 'utf8').catch(() => undefined);
  if (listed !== undefined) {
    const parts = listed.split('\n').filter((line) => line.trim());
    const zipped = await exists(join(dir, TRACE_FILE));
    if (zipped) await removeParts(dir, parts);
    else await zipParts(dir, parts);
  }
  return exists(join(dir, TRACE_FILE));
}

async function zipParts(dir: string, parts: string[]): Promise<void> {
  const zip = new yazl.ZipFile();
  const target = join(dir, TRACE_FILE);
  let entries = 0;
  for (const [index, part] of parts.entries()) {
    const events = await wholeLines(`${part}.trace`);
    if (!events) continue;
    // The trace viewer loads every `<prefix>trace.trace` of a zip with its `.network` as a context.
    const prefix = index === 0 ? '' : `${index}-`;
    zip.addBuffer(events, `${prefix}trace.trace`);
    zip.addBuffer(
      (await wholeLines(`${part}.network`)) ?? Buffer.alloc(0),
      `${prefix}trace.network`,
    );
    entries++;
  }
  zip.end();
  if (entries > 0) {
    await pipeline(zip.outputStream, createWriteStream(`${target}.tmp`, { mode: PRIVATE_FILE }));
    await rename(`${target}.tmp`, target);
  } else {
    zip.outputStream.resume();
  }
  await removeParts(dir, parts);
}

async function removeParts(dir: string, parts: string[]): Promise<void> {
  await Promise.all(
    parts.flatMap((part) =>
      [`${part}.trace`, `${part}.network`].map((file) => rm(file, { force: true })),
    ),
  );
  await rm(join(dir, PARTS_FILE), { force: true });
}

/** A file's content up to its last line break; undefined when there is no whole line. */
async function wholeLines(file: string): Promise<Buffer | undefined> {
  const content = await readFile(file).catch(() => undefined);
  if (!content) return undefined;
  const end = content.lastIndexOf(0x0a);
  return end < 0 ? undefined : content.subarray(0, end + 1);
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
