import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { fromBufferPromise, type Entry } from 'yauzl';
import { SecretScrubber } from '../../src/main/core/recordings/secret-scrubber.js';
import {
  writeTaskBundle,
  type BundleInput,
} from '../../src/main/core/recordings/bundle/task-bundle.js';
import type { OutputAction } from '../../src/shared/responses.js';
import type { RecordedEvent, Recording } from '../../src/shared/recordings.js';
import { unstartedTaskFields, type Task, type TaskEvent } from '../../src/shared/tasks.js';

/** A provider key planted in the fixture: no byte of a bundle may hold it. */
export const SECRET = 'sk-proj-Zq8vW3nR5tY7uI9oP1aS2dF4gH6jK';
export const INVOICE = 'item,price\nlamp,49.00\n';
export const COMPUTER = 'comp_bundlefixture';
export const TASK = 'task_bundlefixture';
/** The recording (and video) starts here; the task's first event 100 ms later. */
export const T0 = Date.parse('2025-03-01T10:00:00.000Z');
/** Step n looks at the screen this long after T0: 0.3 s, 1.0 s, 1.7 s, 2.4 s… */
export const stepOffset = (step: number): number => 0.3 + (step - 1) * 0.7;
export const SHOT = { width: 640, height: 400 };

const run = promisify(execFile);
const iso = (ms: number) => new Date(ms).toISOString();

export type Fixture = {
  root: string;
  recordingDir: string;
  input: BundleInput;
  /** The PNG each step's screenshot file holds (the missing step has none). */
  pngs: Map<number, Buffer>;
  video: Buffer;
  trace: Buffer;
  cleanup(): Promise<void>;
};

/**
 * A finished task of `steps` steps and its computer's recording folder as the recorder leaves
 * it: screenshots, model calls, the computer's events (a person's live-view inputs among them),
 * a 3 s VP8 video, har.ndjson and trace.zip. Step `missing`'s screenshot file is gone. The
 * secret is planted in the instruction, a typed text, the model request, a console message and
 * the HAR.
 */
export async function makeFixture(steps: number, missing?: number): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), 'bundle-'));
  const recordingDir = join(root, 'recording');
  await mkdir(join(recordingDir, 'screenshots'), { recursive: true });
  await mkdir(join(recordingDir, 'model', TASK, 'images'), { recursive: true });

  const pngs = new Map<number, Buffer>();
  const events: TaskEvent[] = [];
  const at = (ms: number) => iso(T0 + ms);
  const event = (input: Record<string, unknown>, step: number, ms: number) =>
    events.push({ task_id: TASK, step, timestamp: at(ms), ...input } as TaskEvent);
  event({ type: 'started', computer_id: COMPUTER, max_steps: 50 }, 0, 100);
  for (let step = 1; step <= steps; step++) {
    const ms = Math.round(stepOffset(step) * 1000);
    const token = randomBytes(24).toString('base64url');
    const url = `http://127.0.0.1:7400/screenshots/${COMPUTER}/${token}.png`;
    if (step !== missing) {
      const png = await screenshot(step);
      pngs.set(step, png);
      await writeFile(join(recordingDir, 'screenshots', `${token}.png`), png);
    }
    event({ type: 'screenshot', screenshot_url: url }, step, ms);
    event({ type: 'reasoning', text: `Step ${step}: I look for the next field.` }, step, ms + 40);
    if (step === 1) {
      event(
        { type: 'message', text: 'Text with </script><!-- <b>markup</b> in it' },
        step,
        ms + 50,
      );
    }
    if (step === 2) {
      event({ type: 'user_message', text: 'please use the second form' }, step, ms + 60);
      event({ type: 'paused' }, step, ms + 70);
      event({ type: 'resumed' }, step, ms + 80);
    }
    if (step === steps) {
      event({ type: 'action', action: { type: 'answer', result: 'all done' } }, step, ms + 100);
      event({ type: 'completed', result: 'all done' }, step, ms + 120);
      break;
    }
    event({ type: 'action', action: actionOf(step) }, step, ms + 100);
    event(
      step === 2
        ? { type: 'action_result', status: 'error', error_message: 'no element at 300, 200' }
        : { type: 'action_result', status: 'success', error_message: null },
      step,
      ms + 150,
    );
  }
  const last = events.at(-1)!.timestamp;

  await writeModelCall(recordingDir, 1);
  await writeModelCall(recordingDir, 2);
  await writeComputerEvents(recordingDir);
  await run('/usr/bin/ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=3:size=320x240:rate=5'],
    ...['-c:v', 'libvpx', '-b:v', '200k', join(recordingDir, 'video.webm')],
  ]);
  const trace = randomBytes(2048);
  await writeFile(join(recordingDir, 'trace.zip'), trace);
  await writeFile(join(recordingDir, 'har.ndjson'), '{}\n');
  // Downloads: a whole file, one still being written, and two the site put a secret in (one
  // packed, so the secret is not in its bytes as they are).
  await mkdir(join(recordingDir, 'downloads'));
  await writeFile(join(recordingDir, 'downloads', 'invoice.csv'), INVOICE);
  await writeFile(join(recordingDir, 'downloads', '.report.csv.part'), 'total,');
  await writeFile(join(recordingDir, 'downloads', 'settings.txt'), `api_key=${SECRET}\n`);
  await writeFile(join(recordingDir, 'downloads', 'keys.csv.gz'), gzipSync(`key\n${SECRET}\n`));

  const task: Task = {
    task_id: TASK,
    status: 'completed',
    exit_code: 0,
    computer_id: COMPUTER,
    instruction: `Sign in to the shop with the key ${SECRET} and order a lamp.\nThen report the order number.`,
    model: 'openai/computer-use-preview',
    steps,
    max_steps: 50,
    created_at: at(0),
    updated_at: last,
    result: 'all done',
    error: null,
    ...unstartedTaskFields(),
  };
  const recording: Recording = {
    computer_id: COMPUTER,
    kind: 'browser',
    status: 'complete',
    started_at: iso(T0),
    ended_at: last,
    duration_ms: Date.parse(last) - T0,
    size_bytes: 0,
    files: [],
    downloads: [],
    task_ids: [TASK],
  };
  const scrubber = new SecretScrubber(() => [SECRET]);
  const input: BundleInput = {
    task,
    events,
    recordingDir,
    recording,
    writeHar,
    scrub: (value) => scrubber.scrub(value),
  };
  return {
    root,
    recordingDir,
    input,
    pngs,
    video: await readFile(join(recordingDir, 'video.webm')),
    trace,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

function actionOf(step: number): OutputAction {
  switch (step % 4) {
    case 1:
      return { type: 'click', x: 120 + step * 10, y: 90, button: 'left' };
    case 2:
      return { type: 'type', text: `my key is ${SECRET}` };
    case 3:
      return { type: 'drag', x: 100, y: 300, end_x: 500, end_y: 320 };
    default:
      return { type: 'keypress', keys: ['ctrl', 'a'] };
  }
}

/** A screenshot of a made-up page: a colour per step, the step's number written on it. */
function screenshot(step: number): Promise<Buffer> {
  const hue = (step * 47) % 360;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SHOT.width}" height="${SHOT.height}">
    <rect width="100%" height="100%" fill="hsl(${hue}, 60%, 85%)"/>
    <rect x="40" y="60" width="560" height="50" fill="#fff" stroke="#888"/>
    <rect x="40" y="280" width="200" height="60" fill="#2457d6"/>
    <text x="40" y="40" font-size="28" font-family="sans-serif">Shop · step ${step}</text>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function writeModelCall(dir: string, step: number): Promise<void> {
  const folder = join(dir, 'model', TASK);
  const name = String(step).padStart(3, '0');
  const image = `images/${name}-1.png`;
  await writeFile(join(folder, image), await screenshot(step));
  const request = {
    model: 'computer-use-preview',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: `Sign in with the key ${SECRET}` },
          { type: 'input_image', image_url: image },
        ],
      },
    ],
  };
  const response = { id: `resp_${name}`, status: 'completed', output: [] };
  await writeFile(join(folder, `${name}.request.json`), JSON.stringify(request, null, 2));
  await writeFile(join(folder, `${name}.response.json`), JSON.stringify(response, null, 2));
}

/** The computer's events: the task's own requests, a person's clicks and keys, a console line. */
async function writeComputerEvents(dir: string): Promise<void> {
  const base = { computer_id: COMPUTER };
  const lines: RecordedEvent[] = [
    {
      ...base,
      type: 'action_request',
      timestamp: iso(T0 + 50),
      request_id: 'req_before',
      action: { type: 'click', at: { x: 1, y: 1 }, button: 'left', count: 1 },
      source: 'live_view',
    },
    {
      ...base,
      type: 'action_request',
      timestamp: iso(T0 + 150),
      request_id: 'req_task',
      action: { type: 'screenshot', base64: false },
    },
    {
      ...base,
      type: 'action_request',
      timestamp: iso(T0 + 1200),
      request_id: 'req_person_1',
      action: { type: 'click', at: { x: 100, y: 120 }, button: 'left', count: 1 },
      source: 'live_view',
    },
    {
      ...base,
      type: 'action_request',
      timestamp: iso(T0 + 1300),
      request_id: 'req_person_2',
      action: { type: 'keypress', keys: ['control', 'a'] },
      source: 'live_view',
    },
    {
      ...base,
      type: 'console',
      timestamp: iso(T0 + 1400),
      level: 'log',
      text: `token=${SECRET}`,
      url: null,
      tab_id: null,
    },
  ];
  const text = lines.map((line) => `${JSON.stringify(line)}\n`).join('');
  // A kill while it was written leaves half a line at the end.
  await writeFile(join(dir, 'events.ndjson'), `${text}{"type":"action_requ`);
}

/** A HAR whose one request carries the secret in a header, written with the secret split across writes. */
async function writeHar(out: NodeJS.WritableStream): Promise<void> {
  const entry = JSON.stringify({
    request: {
      method: 'GET',
      url: 'https://shop.test/',
      headers: [{ name: 'Authorization', value: `Bearer ${SECRET}` }],
    },
  });
  const cut = entry.indexOf(SECRET) + 10;
  for (const chunk of [
    '{"log":{"version":"1.2","entries":[\n',
    entry.slice(0, cut),
    entry.slice(cut),
    '\n]}}\n',
  ]) {
    out.write(chunk);
  }
  out.end();
  await Promise.resolve();
}

export type ZipEntry = { data: Buffer; compressionMethod: number };

/** Every entry of a zip, by name. */
export async function readZip(zip: Buffer): Promise<Map<string, ZipEntry>> {
  const file = await fromBufferPromise(zip, { lazyEntries: true });
  const entries = new Map<string, ZipEntry>();
  for await (const entry of file.eachEntry() as AsyncIterable<Entry>) {
    const stream = await file.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    entries.set(entry.fileName, {
      data: Buffer.concat(chunks),
      compressionMethod: entry.compressionMethod,
    });
  }
  return entries;
}

/** Builds the bundle into memory. */
export async function bundleOf(input: BundleInput): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await writeTaskBundle(input, out);
  return Buffer.concat(chunks);
}

/** Unzips a bundle into a new folder under `root`; its path. */
export async function unzipTo(zip: Buffer, root: string): Promise<string> {
  const folder = join(root, 'unzipped');
  for (const [name, entry] of await readZip(zip)) {
    const path = join(folder, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, entry.data);
  }
  return folder;
}

/** The data a bundle's index.html embeds. */
export function viewerData(html: string): unknown {
  const match = /<script type="application\/json" id="bundle-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error('index.html embeds no data');
  return JSON.parse(match[1]!);
}
