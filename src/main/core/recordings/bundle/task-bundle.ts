import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline as pipe, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import type { Recording } from '../../../../shared/recordings.js';
import { TERMINAL_EVENTS, type Task, type TaskEvent } from '../../../../shared/tasks.js';
import { DownloadDir } from '../../computers/download-dir.js';
import { RECORDED_DOWNLOADS } from '../../computers/drivers/driver.js';
import { checkDownload, type LeftOut } from './download-check.js';
import { filesUnder, isFile, personInputs, pngFileSize, ScrubLines } from './recording-files.js';
import { buildTimeline, titleOf, type ModelFiles, type Shot } from './timeline.js';
import { viewerPage, type ViewerFile } from './viewer-page.js';

export type BundleInput = {
  task: Task;
  /** The task's events, in order. */
  events: TaskEvent[];
  /** <dataDir>/recordings/<computerId>; undefined when the computer was not recorded. Any file may be missing. */
  recordingDir: string | undefined;
  /** The computer's recording (its started_at places the steps on the video). */
  recording: Recording | undefined;
  /** Writes the recording's HAR 1.2 document; called only when the recording has har.ndjson. */
  writeHar: (out: Writable) => Promise<void>;
  /** Removes secrets from text: everything textual in the bundle goes through it. */
  scrub: (text: string) => string;
};

/** A bundle entry: text, or a stream (of a file, or made) opened when the zip reaches it. */
type Entry = { name: string } & ({ text: string } | { open: () => Readable; compress: boolean });

/** Already compressed: stored as they are (deflating them again costs time and saves nothing). */
const COMPRESSED = /\.(webm|mp4|png|jpe?g|zip|gz)$/i;
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,200}$/;
const SCREENSHOT_URL = /\/screenshots\/[^/?#]+\/([A-Za-z0-9_-]+)\.png(?:[?#]|$)/;
const MODEL_FILE = /^(\d+)\.(request|response)\.json$/;

/**
 * Writes a task's bundle to `out` as a zip (docs/API.md §13): index.html (the offline viewer),
 * task.json, events.ndjson, computer-events.ndjson, model/, screenshots/, video.webm,
 * recording.har, trace.zip and downloads/, each when there is something to put in it. No secret gets in:
 * every text goes through input.scrub on its way. Ends `out`; rejects when a file cannot be read
 * (`out` is then destroyed, the zip unfinished).
 */
export async function writeTaskBundle(input: BundleInput, out: Writable): Promise<void> {
  const entries = await bundleEntries(input);
  const zip = new ZipFile();
  const output = zip.outputStream as Readable;
  zip.on('error', (error: Error) => output.destroy(error));
  const written = pipeline(output, out);
  const open = new Set<Readable>();
  const options = { mtime: new Date(input.task.updated_at) };
  for (const entry of entries) {
    if ('text' in entry) {
      zip.addBuffer(Buffer.from(entry.text), entry.name, options);
      continue;
    }
    zip.addReadStreamLazy(entry.name, { ...options, compress: entry.compress }, (done) => {
      const stream = entry.open();
      open.add(stream);
      stream.on('close', () => open.delete(stream));
      // yazl listens for errors only on the streams it opens itself.
      stream.on('error', (error: Error) => zip.emit('error', error));
      done(null, stream);
    });
  }
  zip.end();
  try {
    await written;
  } catch (error) {
    // Its reader went away (or a file failed): the entry being copied stops and closes its file.
    await Promise.all(
      [...open].map((stream) => {
        const closed = once(stream, 'close');
        stream.destroy();
        return closed;
      }),
    );
    throw error;
  }
}

async function bundleEntries(input: BundleInput): Promise<Entry[]> {
  const scrub = deepScrub(input.scrub);
  const task = scrub(input.task);
  const events = scrub(input.events);
  const taskId = input.task.task_id;
  const dir = input.recordingDir;
  const path = (name: string) => join(dir ?? '', name);
  const has = async (name: string) => dir !== undefined && isFile(path(name));
  const [hasVideo, hasHar, hasTrace, hasEvents] = await Promise.all(
    ['video.webm', 'har.ndjson', 'trace.zip', 'events.ndjson'].map(has),
  );

  const model = await modelEntries(dir, taskId, input.scrub);
  const shots = await screenshotEntries(dir, events);
  const span = taskSpan(task, events);
  const people = hasEvents ? scrub(await personInputs(path('events.ndjson'), ...span)) : [];
  const startedAt = input.recording?.started_at;

  const files: Entry[] = [
    { name: 'task.json', text: `${JSON.stringify(task, null, 2)}\n` },
    { name: 'events.ndjson', text: events.map((event) => `${JSON.stringify(event)}\n`).join('') },
  ];
  if (hasEvents) {
    files.push({
      name: 'computer-events.ndjson',
      open: () =>
        pipe(createReadStream(path('events.ndjson')), new ScrubLines(input.scrub), () => {}),
      compress: true,
    });
  }
  files.push(...model.entries, ...shots.entries);
  if (hasVideo) files.push(fileEntry('video.webm', path('video.webm')));
  if (hasHar) files.push({ name: 'recording.har', open: () => harStream(input), compress: true });
  if (hasTrace) files.push(fileEntry('trace.zip', path('trace.zip')));
  if (dir) files.push(...(await downloadEntries(dir, input.scrub)));

  const entries = buildTimeline({
    events,
    personInputs: people,
    shots: shots.byUrl,
    model: model.bySteps,
    videoStartedAt: hasVideo && startedAt ? Date.parse(startedAt) : undefined,
  });
  const page = viewerPage({
    title: titleOf(task),
    task,
    video: hasVideo ? 'video.webm' : null,
    files: listed(
      files.map((file) => file.name),
      taskId,
    ),
    entries,
  });
  return [{ name: 'index.html', text: page }, ...files];
}

/** From the task's first event to its last (or on, while it runs), in epoch ms. */
function taskSpan(task: Task, events: TaskEvent[]): [number, number] {
  const last = events.at(-1);
  const from = Date.parse(events[0]?.timestamp ?? task.created_at);
  const until = last && TERMINAL_EVENTS.has(last.type) ? Date.parse(last.timestamp) : Infinity;
  return [from, until];
}

/** The recorded model exchanges of the task (model/<taskId>/ as the recording keeps it). */
async function modelEntries(
  dir: string | undefined,
  taskId: string,
  scrub: (text: string) => string,
): Promise<{ entries: Entry[]; bySteps: Map<number, ModelFiles> }> {
  const bySteps = new Map<number, ModelFiles>();
  if (dir === undefined || !SAFE_SEGMENT.test(taskId)) return { entries: [], bySteps };
  const folder = join(dir, 'model', taskId);
  const entries: Entry[] = [];
  for (const path of await filesUnder(folder)) {
    const name = `model/${taskId}/${path}`;
    if (COMPRESSED.test(path)) {
      entries.push(fileEntry(name, join(folder, path)));
    } else {
      entries.push({ name, text: scrub(await readFile(join(folder, path), 'utf8')) });
    }
    const match = MODEL_FILE.exec(path);
    if (match) {
      const step = Number(match[1]);
      bySteps.set(step, { ...bySteps.get(step), [match[2] as 'request' | 'response']: name });
    }
  }
  return { entries, bySteps };
}

/** The task's screenshots, as screenshots/step-NNN.png; a missing one is only noted. */
async function screenshotEntries(
  dir: string | undefined,
  events: TaskEvent[],
): Promise<{ entries: Entry[]; byUrl: Map<string, Shot> }> {
  const byUrl = new Map<string, Shot>();
  const entries: Entry[] = [];
  const taken = new Set<string>();
  for (const event of events) {
    if (event.type !== 'screenshot' || byUrl.has(event.screenshot_url)) continue;
    const token = SCREENSHOT_URL.exec(event.screenshot_url)?.[1];
    const file = dir !== undefined && token ? join(dir, 'screenshots', `${token}.png`) : undefined;
    if (!file || !(await isFile(file))) {
      byUrl.set(event.screenshot_url, {
        missing:
          dir === undefined
            ? 'the computer was not recorded'
            : token
              ? 'it was no longer kept'
              : 'not a screenshot Benchtop stored',
      });
      continue;
    }
    const name = uniqueName(`screenshots/step-${String(event.step).padStart(3, '0')}`, taken);
    const size = await pngFileSize(file);
    entries.push(fileEntry(name, file));
    byUrl.set(event.screenshot_url, {
      file: name,
      width: size?.width ?? null,
      height: size?.height ?? null,
    });
  }
  return { entries, byUrl };
}

const LEFT_OUT_WHY: Record<LeftOut, string> = {
  secret: 'it holds a secret (a key, a password or a vault value)',
  too_large: 'larger than the 64 MB a bundle checks for secrets',
  too_large_unpacked: 'what it packs is larger than the 256 MB a bundle checks for secrets',
};

/**
 * The files the browser downloaded, as the recording kept them, under downloads/. A file is the
 * site's, not Benchtop's text, so it is not scrubbed: one that holds a secret (a key, a vault
 * value the site echoed), also inside what it packs, is left out instead, and so is one too
 * large to check; LEFT-OUT.txt says which and why.
 */
async function downloadEntries(dir: string, scrub: (text: string) => string): Promise<Entry[]> {
  const folder = new DownloadDir(join(dir, RECORDED_DOWNLOADS));
  const entries: Entry[] = [];
  const leftOut: string[] = [];
  for (const file of await folder.list()) {
    const path = join(folder.dir, file.name);
    const why = await checkDownload(path, file.size_bytes, (text) => scrub(text) !== text).catch(
      () => null,
    );
    if (why === null) continue;
    if (why) {
      leftOut.push(`${file.name}: ${LEFT_OUT_WHY[why]}`);
      continue;
    }
    entries.push(fileEntry(`downloads/${file.name}`, path));
  }
  if (leftOut.length) {
    const why = leftOut.map((line) => `- ${line}\n`).join('');
    entries.push({
      name: 'downloads/LEFT-OUT.txt',
      text: `Downloads of this computer not in this bundle (GET /computers/{id}/downloads/{name} serves them while the recording is kept):\n${why}`,
    });
  }
  return entries;
}

/** A file copied as it is; deflated unless it is compressed already. */
function fileEntry(name: string, file: string): Entry {
  return { name, open: () => createReadStream(file), compress: !COMPRESSED.test(name) };
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = `${base}.png`;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}.png`;
  taken.add(name);
  return name;
}

/** The HAR document, scrubbed line by line as input.writeHar writes it. */
function harStream(input: BundleInput): Readable {
  const scrubbed = new ScrubLines(input.scrub);
  input.writeHar(scrubbed).then(
    () => {
      if (!scrubbed.writableEnded) scrubbed.end();
    },
    (error: Error) => scrubbed.destroy(error),
  );
  return scrubbed;
}

const LABELS: Record<string, string> = {
  'task.json': 'the task',
  'events.ndjson': "the task's events",
  'computer-events.ndjson': "everything the computer's event stream carried, console messages too",
  'video.webm': 'the screen',
  'recording.har': "the browser's requests (HAR 1.2)",
  'trace.zip': 'a Playwright trace: npx playwright show-trace trace.zip',
};

/** The files the viewer links to: the named ones, and the model folder when there is one. */
function listed(names: string[], taskId: string): ViewerFile[] {
  const files = names.flatMap((name) => (LABELS[name] ? [{ name, label: LABELS[name] }] : []));
  if (names.some((name) => name.startsWith('model/'))) {
    files.push({ name: `model/${taskId}/`, label: "the model's requests and answers" });
  }
  if (names.some((name) => name.startsWith('downloads/'))) {
    files.push({ name: 'downloads/', label: 'the files the browser downloaded' });
  }
  return files;
}

/** `scrub` applied to every string inside a JSON value. */
function deepScrub(scrub: (text: string) => string) {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return scrub(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
  };
  return <T>(value: T): T => walk(value) as T;
}
