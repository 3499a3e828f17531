import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { isPersonInput, type ActionRequestEvent } from '../../../../shared/events.js';
import { isPng, pngSize } from '../../computers/operator.js';

/** True when `path` is a file (false when it is missing or something else). */
export async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isFile(),
    () => false,
  );
}

/** Every file under `dir`, as paths relative to it (`/`-separated), sorted; none when it is missing. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(dir.length + 1)
        .replaceAll('\\', '/'),
    )
    .sort();
}

/** A PNG file's width and height from its header, or undefined when the file is no PNG. */
export async function pngFileSize(
  path: string,
): Promise<{ width: number; height: number } | undefined> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(24);
    const { bytesRead } = await file.read(head, 0, 24, 0);
    if (bytesRead < 24 || !isPng(head)) return undefined;
    return pngSize(head);
  } finally {
    await file.close();
  }
}

/**
 * The action_request events a person sent from the live view between `from` and `until` (epoch
 * ms, inclusive), read from a recording's events.ndjson. A line that is not JSON is skipped (the
 * last one of a recording cut short by a kill may be half written).
 */
export async function personInputs(
  eventsFile: string,
  from: number,
  until: number,
): Promise<ActionRequestEvent[]> {
  const found: ActionRequestEvent[] = [];
  const lines = createInterface({ input: createReadStream(eventsFile), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('"live_view"')) continue;
    const event = parseLine(line);
    if (event?.type !== 'action_request' || !isPersonInput(event)) continue;
    const at = Date.parse(event.timestamp);
    if (at >= from && at <= until) found.push(event);
  }
  return found;
}

function parseLine(line: string): ActionRequestEvent | undefined {
  try {
    return JSON.parse(line) as ActionRequestEvent;
  } catch {
    return undefined;
  }
}

/**
 * Passes text through `scrub` a line at a time, so a secret is never split between two chunks:
 * for NDJSON and other line-oriented text of any size (a line is held until its end arrives).
 */
export class ScrubLines extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly scrub: (text: string) => string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const text = this.pending + this.decoder.write(chunk);
    const end = text.lastIndexOf('\n') + 1;
    this.pending = text.slice(end);
    if (end > 0) this.push(this.scrub(text.slice(0, end)));
    done();
  }

  override _flush(done: TransformCallback): void {
    const rest = this.pending + this.decoder.end();
    if (rest) this.push(this.scrub(rest));
    done();
  }
}
