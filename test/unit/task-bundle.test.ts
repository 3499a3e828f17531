import { readdirSync, readlinkSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRanAction, type RanAction } from '../../src/shared/describe-action.js';
import { writeTaskBundle } from '../../src/main/core/recordings/bundle/task-bundle.js';
import type { StepEntry, TimelineEntry } from '../../src/main/core/recordings/bundle/timeline.js';
import type { ViewerData } from '../../src/main/core/recordings/bundle/viewer-page.js';
import { REDACTED } from '../../src/main/core/recordings/secret-scrubber.js';
import type { TaskEvent } from '../../src/shared/tasks.js';
import {
  bundleOf,
  COMPUTER,
  INVOICE,
  makeFixture,
  readZip,
  SECRET,
  SHOT,
  stepOffset,
  TASK,
  viewerData,
  type Fixture,
  type ZipEntry,
} from '../helpers/bundle-fixture.js';

const STEPS = 4;
const MISSING = 4;

describe('a task bundle of a recorded computer', () => {
  let fixture: Fixture;
  let zip: Buffer;
  let entries: Map<string, ZipEntry>;
  const textOf = (name: string) => entries.get(name)!.data.toString('utf8');

  beforeAll(async () => {
    fixture = await makeFixture(STEPS, MISSING);
    zip = await bundleOf(fixture.input);
    entries = await readZip(zip);
  });
  afterAll(() => fixture?.cleanup());

  it('holds the viewer, the task, its events, the model calls, screenshots, video, HAR and trace', () => {
    expect([...entries.keys()]).toEqual([
      'index.html',
      'task.json',
      'events.ndjson',
      'computer-events.ndjson',
      `model/${TASK}/001.request.json`,
      `model/${TASK}/001.response.json`,
      `model/${TASK}/002.request.json`,
      `model/${TASK}/002.response.json`,
      `model/${TASK}/images/001-1.png`,
      `model/${TASK}/images/002-1.png`,
      'screenshots/step-001.png',
      'screenshots/step-002.png',
      'screenshots/step-003.png',
      'video.webm',
      'recording.har',
      'trace.zip',
      'downloads/invoice.csv',
      'downloads/LEFT-OUT.txt',
    ]);
  });

  it('holds the whole downloads as they are, and says which it left out and why', () => {
    expect(textOf('downloads/invoice.csv')).toBe(INVOICE);
    expect(textOf('downloads/LEFT-OUT.txt')).toContain(
      '- settings.txt: it holds a secret (a key, a password or a vault value)\n',
    );
    expect(textOf('downloads/LEFT-OUT.txt')).toContain(
      '- keys.csv.gz: it holds a secret (a key, a password or a vault value)\n',
    );
  });

  it('stores the already-compressed files as they are and deflates the text', () => {
    for (const [name, entry] of entries) {
      const stored = /\.(png|webm|zip)$/.test(name);
      expect(entry.compressionMethod, name).toBe(stored ? 0 : 8);
    }
    expect(entries.get('video.webm')!.data.equals(fixture.video)).toBe(true);
    expect(entries.get('trace.zip')!.data.equals(fixture.trace)).toBe(true);
    for (const step of [1, 2, 3]) {
      const name = `screenshots/step-00${step}.png`;
      expect(entries.get(name)!.data.equals(fixture.pngs.get(step)!), name).toBe(true);
    }
  });

  it('has no byte of the secret anywhere, in any entry or in the zip itself', () => {
    expect(zip.includes(SECRET)).toBe(false);
    for (const [name, entry] of entries) {
      expect(entry.data.includes(SECRET), name).toBe(false);
      expect(entry.data.includes(encodeURIComponent(SECRET)), name).toBe(false);
    }
    expect(textOf('task.json')).toContain(REDACTED);
    expect(textOf(`model/${TASK}/001.request.json`)).toContain(REDACTED);
    expect(textOf('computer-events.ndjson')).toContain(`token=${REDACTED}`);
    expect(textOf('recording.har')).toContain(`Bearer ${REDACTED}`);
  });

  it('keeps the task and its events, scrubbed and otherwise unchanged', () => {
    const scrub = (value: unknown) =>
      JSON.parse(JSON.stringify(value).replaceAll(SECRET, REDACTED));
    expect(JSON.parse(textOf('task.json'))).toEqual(scrub(fixture.input.task));
    const lines = textOf('events.ndjson').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as TaskEvent)).toEqual(scrub(fixture.input.events));
  });

  it("copies the computer's events line for line, half-written last line included", () => {
    const lines = textOf('computer-events.ndjson').split('\n');
    expect(lines).toHaveLength(6);
    expect(lines.at(-1)).toBe('{"type":"action_requ');
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'action_request', source: 'live_view' });
  });

  it('writes a well-formed HAR document', () => {
    const har = JSON.parse(textOf('recording.har')) as {
      log: { version: string; entries: unknown[] };
    };
    expect(har.log.version).toBe('1.2');
    expect(har.log.entries).toHaveLength(1);
  });

  describe('index.html', () => {
    let html: string;
    let data: ViewerData;
    const steps = () => data.entries.filter((entry): entry is StepEntry => entry.kind === 'step');

    beforeAll(() => {
      html = textOf('index.html');
      data = viewerData(html) as ViewerData;
    });

    it('forbids the network in its CSP and refers to no other origin', () => {
      expect(html).toContain(
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`,
      );
      // Only the SVG namespace name, which is no request.
      expect(html.match(/https?:\/\/[^\s"'<>]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    });

    it('embeds its data with every < escaped, so a message cannot end the script early', () => {
      const embedded = /id="bundle-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
      expect(embedded).not.toContain('<');
      const message = steps()[1]!.lines.find((line) => line.type === 'message');
      expect(message?.text).toBe('Text with </script><!-- <b>markup</b> in it');
    });

    it('has a start block and one entry per step, each with its screenshot, marks and lines', () => {
      expect(steps().map((step) => step.step)).toEqual([0, 1, 2, 3, 4]);
      const [start, one, two, three, four] = steps();
      expect(start!.shot).toBeNull();
      expect(start!.lines).toEqual([
        { type: 'started', label: 'started', text: `on ${COMPUTER}, at most 50 steps` },
      ]);
      expect(one!.shot).toEqual({ file: 'screenshots/step-001.png', ...SHOT });
      expect(one!.marks).toEqual([{ x: 130, y: 90 }]);
      expect(one!.lines.find((line) => line.type === 'action')).toEqual({
        type: 'action',
        label: 'does',
        text: 'click at 130, 90',
        result: { ok: true, text: null },
      });
      expect(one!.model).toEqual({
        request: `model/${TASK}/001.request.json`,
        response: `model/${TASK}/001.response.json`,
      });
      expect(two!.captions).toEqual([`type “my key is ${REDACTED}”`]);
      expect(two!.lines.map((line) => line.label)).toEqual([
        'thinks',
        'person said',
        'paused',
        'resumed',
        'does',
      ]);
      expect(two!.lines.at(-1)!.result).toEqual({ ok: false, text: 'no element at 300, 200' });
      expect(three!.marks).toEqual([{ x: 100, y: 300, end_x: 500, end_y: 320 }]);
      expect(three!.model).toEqual({ request: null, response: null });
      expect(four!.shot).toEqual({ missing: 'it was no longer kept' });
      expect(four!.lines.map((line) => line.text)).toEqual([
        'Step 4: I look for the next field.',
        'answer: all done',
        'all done',
      ]);
    });

    it("places a person's live-view inputs during the task among the steps, at their times", () => {
      const kinds = data.entries.map((entry: TimelineEntry) =>
        entry.kind === 'step' ? `step ${entry.step}` : `person: ${entry.text}`,
      );
      expect(kinds).toEqual([
        'step 0',
        'step 1',
        'step 2',
        'person: click at 100, 120',
        'person: keypress control+a',
        'step 3',
        'step 4',
      ]);
    });

    it('puts each entry on the video at its time since the recording started', () => {
      for (const step of steps().slice(1)) {
        expect(step.offset).toBeCloseTo(stepOffset(step.step), 3);
      }
      expect(data.entries[3]).toMatchObject({ kind: 'person', offset: 1.2 });
      expect(data.video).toBe('video.webm');
    });

    it('lists the files it links to', () => {
      expect(data.files.map((file) => file.name)).toEqual([
        'task.json',
        'events.ndjson',
        'computer-events.ndjson',
        'video.webm',
        'recording.har',
        'trace.zip',
        `model/${TASK}/`,
        'downloads/',
      ]);
    });
  });
});

describe('a task bundle of a computer that was not recorded', () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await makeFixture(2);
  });
  afterAll(() => fixture?.cleanup());

  it('holds the viewer, the task and its events; the screenshots are noted as missing', async () => {
    const input = { ...fixture.input, recordingDir: undefined, recording: undefined };
    const entries = await readZip(await bundleOf(input));
    expect([...entries.keys()]).toEqual(['index.html', 'task.json', 'events.ndjson']);
    const data = viewerData(entries.get('index.html')!.data.toString()) as ViewerData;
    expect(data.video).toBeNull();
    const shots = data.entries.flatMap((entry) => (entry.kind === 'step' ? [entry.shot] : []));
    expect(shots).toEqual([
      null,
      { missing: 'the computer was not recorded' },
      { missing: 'the computer was not recorded' },
    ]);
    expect(data.entries.every((entry) => entry.offset === null)).toBe(true);
  });
});

describe('a task bundle whose HAR cannot be written', () => {
  it('fails with the reason, and destroys the output (no truncated zip looks whole)', async () => {
    const fixture = await makeFixture(1);
    try {
      const input = {
        ...fixture.input,
        writeHar: () => Promise.reject(new Error('har.ndjson is unreadable')),
      };
      const out = new PassThrough();
      out.resume();
      await expect(writeTaskBundle(input, out)).rejects.toThrow('har.ndjson is unreadable');
      expect(out.destroyed).toBe(true);
      expect(out.writableFinished).toBe(false);
    } finally {
      await fixture.cleanup();
    }
  });
});

describe("the viewer's wording of what a person did", () => {
  it('reads as the window does', () => {
    const cases: Array<[RanAction, string]> = [
      [{ type: 'click', at: { x: 5, y: 6 }, button: 'left', count: 2 }, 'double click at 5, 6'],
      [{ type: 'click', at: { x: 5, y: 6 }, button: 'right', count: 1 }, 'right click at 5, 6'],
      [
        {
          type: 'drag',
          path: [
            { x: 1, y: 2 },
            { x: 3, y: 4 },
            { x: 7, y: 8 },
          ],
        },
        'drag from 1, 2 to 7, 8',
      ],
      [{ type: 'scroll', at: { x: 10, y: 20 }, dx: 0, dy: 300 }, 'scroll at 10, 20 by 0, 300'],
      [{ type: 'point_and_type', at: { x: 1, y: 1 }, text: 'hi' }, 'type “hi” at 1, 1'],
      [{ type: 'navigate', url: 'https://example.com/' }, 'go to https://example.com/'],
      [{ type: 'list_tabs' }, 'list tabs'],
    ];
    for (const [action, text] of cases) expect(describeRanAction(action)).toBe(text);
  });
});

describe('a task bundle whose reader goes away', () => {
  it('stops, and leaves no file of the recording open', async () => {
    const fixture = await makeFixture(1);
    const openFiles = () =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target.startsWith(fixture.root) ? [target] : [];
        } catch {
          return [];
        }
      });
    try {
      // A download cut off in the middle of the video.
      const out = new Writable({
        highWaterMark: 1024,
        write(chunk: Buffer, _encoding, done) {
          if (chunk.includes(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))) this.destroy();
          done();
        },
      });
      await expect(writeTaskBundle(fixture.input, out)).rejects.toThrow();
      expect(openFiles()).toEqual([]);
    } finally {
      await fixture.cleanup();
    }
  });
});
