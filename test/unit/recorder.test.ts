import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/main/core/config.js';
import { Recorder } from '../../src/main/core/recordings/recorder.js';
import { RecordingStore } from '../../src/main/core/recordings/recording-store.js';
import {
  proxyPassword,
  REDACTED,
  SecretScrubber,
} from '../../src/main/core/recordings/secret-scrubber.js';
import { ScreencastHub } from '../../src/main/core/screencast/screencast-hub.js';
import { openDatabase, type Db } from '../../src/main/core/store/database.js';
import { frameColors } from '../helpers/media.js';

describe('SecretScrubber', () => {
  const scrubber = new SecretScrubber(() => ['prov-key-123456', 'pw"with\\quote', 'short']);

  it('removes Benchtop keys by their shape, URL passwords, and every listed secret in its forms', () => {
    const text = [
      'Authorization: Bearer sk_abcdefghijklmnopqrstuvwxyz012345',
      'proxy http://agent:hunter2secret@127.0.0.1:8080/ and socks5://u:p4ss@host:1',
      'key prov-key-123456 again prov-key-123456',
      JSON.stringify({ typed: 'pw"with\\quote' }),
      `url ${encodeURIComponent('pw"with\\quote')}`,
      'a short word stays',
    ].join('\n');
    const out = scrubber.scrub(text);
    for (const secret of [
      'sk_abcdefghijklmnopqrstuvwxyz012345',
      'hunter2secret',
      'p4ss',
      'prov-key-123456',
      'with\\\\quote',
      encodeURIComponent('pw"with\\quote'),
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain(`http://agent:${REDACTED}@127.0.0.1:8080/`);
    expect(out).toContain('a short word stays');
    expect(out.split(REDACTED).length - 1).toBeGreaterThanOrEqual(7);
  });

  it('reads the proxy password of a settings URL, decoded', () => {
    expect(proxyPassword('http://user:p%40ss@proxy:3128')).toBe('p@ss');
    expect(proxyPassword('http://proxy:3128')).toBeUndefined();
    expect(proxyPassword('not a url')).toBeUndefined();
    expect(proxyPassword(null)).toBeUndefined();
  });
});

describe('Recorder: retention, disk cap and recovery', () => {
  let dir: string;
  let db: Db;
  let store: RecordingStore;
  let settings: Settings['recording'];
  let recorder: Recorder;
  const hub = new ScreencastHub();

  const make = () =>
    new Recorder({
      root: join(dir, 'recordings'),
      store,
      screencasts: hub,
      scrubber: new SecretScrubber(() => []),
      settings: () => settings,
    });

  /** A recorded computer that ended with `bytes` of files, `endedMsAgo` ago. */
  async function ended(id: string, bytes: number, endedMsAgo: number): Promise<void> {
    const now = Date.now();
    store.insert({
      computer_id: id,
      org: 'local',
      kind: 'browser',
      status: 'recording',
      started_at: now - endedMsAgo - 1000,
    });
    await mkdir(join(dir, 'recordings', id), { recursive: true });
    writeFileSync(join(dir, 'recordings', id, 'events.ndjson'), Buffer.alloc(bytes, 'x'));
    store.finish(id, now - endedMsAgo, 'deleted', bytes);
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'benchtop-recorder-'));
    db = openDatabase(join(dir, 'benchtop.sqlite'));
    store = new RecordingStore(db);
    settings = { enabled: true, retention_days: 7, max_disk_mb: 1, ffmpeg_path: null };
    recorder = make();
    await recorder.init();
  });
  afterEach(async () => {
    await recorder.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drops recordings past retention_days, saying so when one is asked for', async () => {
    await ended('comp_old', 10, 8 * 24 * 3600 * 1000);
    await ended('comp_new', 10, 1000);
    await recorder.sweep();
    await expect(recorder.view('local', 'comp_old')).rejects.toThrow(
      'the recording of comp_old was dropped (older than recording.retention_days (7 days))',
    );
    expect((await recorder.view('local', 'comp_new')).status).toBe('complete');
  });

  it('over max_disk_mb, drops the oldest ended recordings first until all fit', async () => {
    const half = 512 * 1024;
    await ended('comp_1', half, 30_000);
    await ended('comp_2', half, 20_000);
    await ended('comp_3', half, 10_000);
    await recorder.sweep();
    await expect(recorder.view('local', 'comp_1')).rejects.toThrow(
      'over recording.max_disk_mb (1 MB)',
    );
    expect((await recorder.view('local', 'comp_2')).status).toBe('complete');
    expect((await recorder.view('local', 'comp_3')).status).toBe('complete');
    expect((await recorder.list('local', 10)).map((item) => item.computer_id)).toEqual([
      'comp_3',
      'comp_2',
    ]);
  });

  it('a recording left open by a killed run is completed at the next start, ended at its last event', async () => {
    await recorder.close();
    const started = Date.now() - 60_000;
    store.insert({
      computer_id: 'comp_k',
      org: 'local',
      kind: 'desktop',
      status: 'recording',
      started_at: started,
    });
    const folder = join(dir, 'recordings', 'comp_k');
    await mkdir(folder, { recursive: true });
    const last = new Date(started + 5000).toISOString();
    writeFileSync(
      join(folder, 'events.ndjson'),
      `${JSON.stringify({ type: 'tab', computer_id: 'comp_k', timestamp: last, event: 'opened', tab_id: 't', url: 'about:blank' })}\n{"type":"act`,
    );
    recorder = make();
    await recorder.init();
    const view = await recorder.view('local', 'comp_k');
    expect(view).toMatchObject({ status: 'complete', ended_at: last, duration_ms: 5000 });
    const lines = readFileSync(join(folder, 'events.ndjson'), 'utf8').trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      type: 'recording_ended',
      reason: 'benchtop_stopped',
      timestamp: last,
    });
  });

  it('a computer that ends before any frame came gets its last screen as the video', async () => {
    recorder.begin({ id: 'comp_brief', org: 'local', kind: 'browser' });
    const png = await sharp({
      create: { width: 320, height: 200, channels: 3, background: '#36c' },
    })
      .png()
      .toBuffer();
    const operator = { screenshot: () => Promise.resolve({ png, width: 320, height: 200 }) };
    await recorder.closing({ id: 'comp_brief', operator } as never);
    recorder.end('comp_brief', 'deleted');
    const path = await recorder.video('local', 'comp_brief');
    expect(path.endsWith('video.webm')).toBe(true);
    expect((await recorder.view('local', 'comp_brief')).files.map((file) => file.name)).toContain(
      'video.webm',
    );
  });

  it('ends on a screenshot stored since its last action without taking another; after an action, on a new one', async () => {
    const solid = (background: string) =>
      sharp({ create: { width: 320, height: 200, channels: 3, background } })
        .png()
        .toBuffer();
    const [blue, red] = [await solid('#0000ff'), await solid('#ff0000')];
    const shots = join(dir, 'shots');
    await mkdir(shots);
    let looked = 0;
    const operator = {
      screenshot: () => {
        looked += 1;
        return Promise.resolve({ png: red, width: 320, height: 200 });
      },
    };
    /** Ends the computer: the colour its video ends on. */
    const endsOn = async (id: string) => {
      await recorder.closing({ id, operator } as never);
      recorder.end(id, 'deleted');
      const [r, g, b] = (await frameColors(await recorder.video('local', id))).at(-1)!;
      return b > 200 && r + g < 60
        ? 'blue'
        : r > 200 && g + b < 60
          ? 'red'
          : `rgb(${r}, ${g}, ${b})`;
    };
    /** An action's events, with what happens while it runs (a screenshot stored). */
    const act = async (
      id: string,
      requestId: string,
      type: string,
      during?: () => Promise<void>,
    ) => {
      const event = { computer_id: id, timestamp: new Date().toISOString() };
      recorder.tap({
        ...event,
        type: 'action_request',
        request_id: requestId,
        action: { type },
      } as never);
      await during?.();
      recorder.tap({
        ...event,
        type: 'action_response',
        request_id: requestId,
        status: 'success',
      } as never);
    };

    // A click, then a screenshot action (its image stored while it runs): the screenshot is the
    // computer's last screen.
    recorder.begin({ id: 'comp_shot', org: 'local', kind: 'browser' });
    await act('comp_shot', 'req_click', 'click');
    writeFileSync(join(shots, 'one.png'), blue);
    await act('comp_shot', 'req_shot', 'screenshot', () =>
      recorder.screenshotSaved('comp_shot', join(shots, 'one.png')),
    );
    expect(await endsOn('comp_shot')).toEqual('blue');
    expect(looked).toBe(0);

    // An action after the screenshot: the screen may have changed, so it is looked at again.
    recorder.begin({ id: 'comp_moved', org: 'local', kind: 'browser' });
    writeFileSync(join(shots, 'two.png'), blue);
    await recorder.screenshotSaved('comp_moved', join(shots, 'two.png'));
    await act('comp_moved', 'req_type', 'type');
    expect(await endsOn('comp_moved')).toEqual('red');
    expect(looked).toBe(1);
  });

  it('a computer created with recording off has a row saying so, and no folder', async () => {
    expect(
      recorder.begin({ id: 'comp_off', org: 'local', kind: 'browser' }, false),
    ).toBeUndefined();
    expect(await recorder.view('local', 'comp_off')).toMatchObject({
      status: 'none',
      files: [],
      started_at: null,
    });
    await expect(recorder.file('local', 'comp_off', 'events')).rejects.toThrow(
      '"recording": false',
    );
    await expect(recorder.view('other', 'comp_off')).rejects.toThrow(
      'no recording of computer comp_off',
    );
  });
});
