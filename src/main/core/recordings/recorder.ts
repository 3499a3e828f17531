import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { link, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ComputerKind } from '../../../shared/computers.js';
import type { ComputerEvent } from '../../../shared/events.js';
import {
  RECORDING_FILES,
  type Recording,
  type RecordingFile,
  type RecordingFileKey,
  type RecordedEvent,
} from '../../../shared/recordings.js';
import type { Settings } from '../config.js';
import { RECORDED_DOWNLOADS, type RecordingSink } from '../computers/drivers/driver.js';
import { DownloadDir } from '../computers/download-dir.js';
import type { DownloadFolder } from '../computers/operator.js';
import { invalidRequest, notFound } from '../errors.js';
import type { ScreencastHub, Watched } from '../screencast/screencast-hub.js';
import { PRIVATE_DIR, PRIVATE_FILE } from '../store/private-files.js';
import type { Writable } from 'node:stream';
import { pngSize } from '../computers/operator.js';
import type { ComputerSession } from '../computers/computer-session.js';
import type { Task, TaskEvent } from '../../../shared/tasks.js';
import { recoverTrace } from '../computers/browser/browser-trace.js';
import { writeHar } from '../computers/browser/har.js';
import { writeTaskBundle } from './bundle/task-bundle.js';
import { chapterTitle } from './chapters.js';
import { scrubZip } from './scrub-zip.js';
import type { RecordingRow, RecordingStore } from './recording-store.js';
import type { SecretScrubber } from './secret-scrubber.js';
import { findFfmpeg, VideoTrack, type Chapter } from './video/video-track.js';

/** What the recorder asks of the screencast: the frames the live view gets, at this rate. */
const RECORDER_VIEW = { fps: 5, quality: 60 } as const;
const DAY_MS = 24 * 3600 * 1000;
/** A capture that sent no frame this long after it started is started again (FIRST_FRAME_TRIES in all). */
const FIRST_FRAME_MS = 3000;
const FIRST_FRAME_TRIES = 3;
/** How long the last look at an ending computer's screen may take. */
const LAST_LOOK_MS = 2000;
/** Rows of dropped recordings are kept this long, so asking for one says why it is gone. */
const FORGET_DROPPED_MS = 90 * DAY_MS;
const SWEEP_EVERY_MS = 3600 * 1000;
/** Files a recording's folder may hold (anything else there is not served). */
const FILE_NAMES = {
  events: 'events.ndjson',
  har: 'har.ndjson',
  trace: 'trace.zip',
  video: 'video.webm',
  screenshots: 'screenshots',
  model: 'model',
} as const;

export type RecorderDeps = {
  /** <dataDir>/recordings */
  root: string;
  store: RecordingStore;
  screencasts: ScreencastHub;
  scrubber: SecretScrubber;
  settings: () => Settings['recording'];
  log?: (message: string) => void;
};

type Active = {
  row: RecordingRow;
  dir: string;
  events: WriteStream;
  chapters: Chapter[];
  video: Promise<VideoTrack | undefined>;
  stopWatching?: () => void;
  /** The last moment anything was recorded (what a recovery after a kill ends it at). */
  lastAt: number;
  /** When the video last got a frame, and when an action that may change the screen last ended. */
  framedAt: number;
  actedAt: number;
  /** Actions that may have changed the screen, counted as they end. */
  acted: number;
  /** Screenshot actions of the current tab under way (they change nothing on the screen). */
  looking: Set<string>;
  /** The computer's last stored screenshot (a link in the recording): when, after how many actions. */
  shot?: { file: string; at: number; acted: number };
  /** The last screen, on its way to the video (see closing). */
  lastLook?: Promise<void>;
  /** What the driver still writes after the end (RecordingSink.finishLater). */
  later: Promise<void>[];
  /** Events not yet written (see write). */
  queued: RecordedEvent[];
  /** Folders made in the recording so far: one mkdir each, not one per screenshot or model call. */
  folders: Set<string>;
};

/**
 * The flight recorder (docs/API.md §13). Every computer records from creation unless asked not
 * to: its events (the events stream, console messages, a person's live-view inputs) as NDJSON,
 * its screen from the screencast the live view uses, and whatever its driver alone sees (a
 * browser's HAR and trace). Everything is written under recordings/<computer id>/ as it
 * happens, so a kill of Benchtop leaves a recording that the next start completes; the video is
 * encoded when the computer ends. Retention and a disk cap drop the oldest ended recordings.
 */
export class Recorder {
  private readonly active = new Map<string, Active>();
  /** Ended recordings whose video is being encoded, by computer id. */
  private readonly finishing = new Map<string, Promise<void>>();
  /** Ended recordings whose video is being encoded (on first need), by computer id. */
  private readonly encoding = new Map<string, Promise<string | undefined>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly ffmpeg: () => Promise<string | undefined>;

  constructor(private readonly deps: RecorderDeps) {
    let found: { path: string | null; binary: Promise<string | undefined> } | undefined;
    // Looked up once per configured path (a settings change looks again).
    this.ffmpeg = () => {
      const path = deps.settings().ffmpeg_path;
      if (found?.path !== path) found = { path, binary: findFfmpeg(path) };
      return found.binary;
    };
  }

  /** Completes recordings a killed run left open, drops what retention says, and sweeps hourly. */
  async init(): Promise<void> {
    await mkdir(this.deps.root, { recursive: true, mode: PRIVATE_DIR });
    for (const row of this.deps.store.unfinished()) {
      await this.recover(row).catch((error: unknown) =>
        this.deps.log?.(`could not complete the recording of ${row.computer_id}: ${String(error)}`),
      );
    }
    await this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  /**
   * Starts recording a computer being created (before its driver starts it): its folder and
   * index row. Undefined when it records nothing (`recording: false`, or off in settings).
   */
  begin(
    computer: { id: string; org: string; kind: ComputerKind },
    wanted?: boolean,
  ): RecordingSink | undefined {
    const startedAt = Date.now();
    const row: RecordingRow = {
      computer_id: computer.id,
      org: computer.org,
      kind: computer.kind,
      status: (wanted ?? this.deps.settings().enabled) ? 'recording' : 'none',
      started_at: startedAt,
      ended_at: null,
      end_reason: null,
      size_bytes: 0,
      dropped_reason: null,
    };
    this.deps.store.insert(row);
    if (row.status === 'none') return undefined;
    const dir = this.dirOf(computer.id);
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    const events = createWriteStream(join(dir, FILE_NAMES.events), {
      flags: 'a',
      mode: PRIVATE_FILE,
    });
    events.on('error', (error) => this.deps.log?.(`recording ${computer.id}: ${error.message}`));
    const active: Active = {
      row,
      dir,
      events,
      chapters: [],
      lastAt: startedAt,
      framedAt: 0,
      actedAt: 0,
      acted: 0,
      looking: new Set(),
      later: [],
      queued: [],
      folders: new Set(),
      video: VideoTrack.open(dir, { startedAt, ffmpeg: this.ffmpeg }).catch((error: unknown) => {
        this.deps.log?.(`recording ${computer.id}: no video (${String(error)})`);
        return undefined;
      }),
    };
    this.active.set(computer.id, active);
    return {
      dir,
      scrub: (text) => this.deps.scrubber.scrub(text),
      finishLater: (work) => active.later.push(work),
      console: (entry) =>
        this.write(active, {
          type: 'console',
          computer_id: computer.id,
          timestamp: new Date().toISOString(),
          level: entry.level,
          text: entry.text,
          url: entry.url,
          tab_id: entry.tabId,
        }),
    };
  }

  /** A create that failed after begin(): nothing of it is kept. */
  async cancel(computerId: string): Promise<void> {
    const active = this.active.get(computerId);
    this.active.delete(computerId);
    this.deps.store.remove(computerId);
    if (!active) return;
    this.flush(active);
    await new Promise<void>((resolve) => active.events.end(resolve));
    await rm(active.dir, { recursive: true, force: true });
  }

  /** The computer runs: its screen is recorded from now (the frames the live view gets). */
  watch(session: Watched, attempt = 1): void {
    const active = this.active.get(session.id);
    if (!active) return;
    let frames = 0;
    active.stopWatching = this.deps.screencasts.watch(session, {
      ...RECORDER_VIEW,
      passive: true,
      // At the time the picture was taken: at 5 frames a second a frame may come up to 200 ms
      // later, and a step's screenshot would show in the video after the step began.
      onPicture: (frame, at) => {
        frames += 1;
        active.lastAt = Date.now();
        active.framedAt = at;
        void active.video.then((video) =>
          video?.add(frame.jpeg ?? frame.png, frame.width, frame.height, at),
        );
      },
      onCursor: () => {},
    });
    // A screencast sends a first frame as it starts. One that sent none (its start stuck behind a
    // page being replaced, seen on a loaded machine) is started again, a few times.
    const check = setTimeout(() => {
      if (frames > 0 || this.active.get(session.id) !== active || attempt >= FIRST_FRAME_TRIES) {
        return;
      }
      this.deps.log?.(
        `recording ${session.id}: no frame ${FIRST_FRAME_MS} ms into the capture; starting it again`,
      );
      active.stopWatching?.();
      this.watch(session, attempt + 1);
    }, FIRST_FRAME_MS);
    check.unref();
  }

  /**
   * The computer is ending, its screen still there. Every recording shows what it ended on: a
   * computer that ended before its screencast sent any frame (one that lived a moment on a
   * loaded machine), or right after an action whose outcome the capture had yet to take (it
   * keeps out of actions' way), gets its last screen as the video's last frame: a screenshot
   * stored since the last action ended (a client's or a task's last look), else one taken now.
   */
  async closing(session: Pick<ComputerSession, 'id' | 'operator'>): Promise<void> {
    const active = this.active.get(session.id);
    const video = active && (await active.video);
    if (!video || (video.frames > 0 && active.framedAt >= active.actedAt)) return;
    const { shot } = active;
    const look =
      shot && shot.acted === active.acted
        ? { png: readFile(shot.file).catch(() => undefined), at: shot.at }
        : {
            png: await within(session.operator.screenshot(), LAST_LOOK_MS).then((s) => s?.png),
            at: Date.now(),
          };
    // Made a frame while the computer closes: the recording's end waits for it.
    active.lastLook = (async () => {
      const png = await look.png;
      if (!png) return;
      const { width, height } = pngSize(png);
      video.add(png, width, height, look.at);
    })().catch(() => {});
  }

  /** Every event of every computer (the events bus's tap). */
  readonly tap = (event: ComputerEvent): void => {
    const active = this.active.get(event.computer_id);
    if (!active) return;
    if (event.type === 'action_response' && !active.looking.delete(event.request_id)) {
      active.actedAt = Date.now();
      active.acted += 1;
    }
    if (event.type === 'action_request') {
      const action = event.action as { type: string; tab_id?: string };
      if (action.type === 'screenshot' && !action.tab_id) active.looking.add(event.request_id);
      active.chapters.push({
        at: Date.parse(event.timestamp),
        title: this.deps.scrubber.scrub(chapterTitle(event)),
      });
    }
    this.write(active, event);
  };

  /** A screenshot the computer took: kept with the recording (a task's bundle shows it). */
  async screenshotSaved(computerId: string, file: string): Promise<void> {
    const at = Date.now();
    const active = this.active.get(computerId);
    if (!active) return;
    const { acted } = active;
    const folder = await made(active, join(active.dir, FILE_NAMES.screenshots));
    // A hard link costs nothing; the screenshot store may delete its name, the data stays.
    const kept = join(folder, basename(file));
    const linked = await link(file, kept).then(
      () => true,
      () => false,
    );
    if (at >= (active.shot?.at ?? 0)) active.shot = { file: linked ? kept : file, at, acted };
  }

  /** A task started on a recorded computer: its bundle is made from this recording. */
  taskStarted(computerId: string, taskId: string): void {
    if (this.active.has(computerId)) this.deps.store.addTask(computerId, taskId);
  }

  /**
   * A task on a recorded computer ended: the video so far, asked for from now, lasts to its end
   * even when the screen has not changed since it was last rendered.
   */
  taskEnded(computerId: string): void {
    void this.active.get(computerId)?.video.then((video) => video?.moved());
  }

  /**
   * One Responses call of a task, kept as `model/<task>/<step>.request.json` and
   * `.response.json`: images become files beside them, and secrets are scrubbed.
   */
  async modelCall(call: {
    computerId: string;
    taskId: string;
    step: number;
    request: unknown;
    response: unknown;
  }): Promise<void> {
    const active = this.active.get(call.computerId);
    if (!active) return;
    const folder = join(active.dir, FILE_NAMES.model, call.taskId);
    await made(active, join(folder, 'images'));
    const name = String(call.step).padStart(3, '0');
    const images: Array<Promise<void>> = [];
    let count = 0;
    const request = JSON.stringify(
      call.request,
      (_key, value: unknown) => {
        if (typeof value !== 'string') return value;
        const inline = /^data:image\/(png|jpeg|webp);base64,(.+)$/s.exec(value);
        if (inline) {
          const file = `images/${name}-${++count}.${inline[1] === 'jpeg' ? 'jpg' : inline[1]}`;
          images.push(
            writeFile(join(folder, file), Buffer.from(inline[2]!, 'base64'), {
              mode: PRIVATE_FILE,
            }),
          );
          return `model/${file}`;
        }
        // A screenshot URL of this computer: the recording keeps the file under screenshots/.
        const shot = /\/screenshots\/[\w-]+\/([\w-]+\.png)$/.exec(value);
        return shot ? `screenshots/${shot[1]}` : value;
      },
      2,
    );
    const scrub = (text: string) => this.deps.scrubber.scrub(text);
    await Promise.all([
      ...images,
      writeFile(join(folder, `${name}.request.json`), scrub(request), { mode: PRIVATE_FILE }),
      writeFile(
        join(folder, `${name}.response.json`),
        scrub(JSON.stringify(call.response, null, 2)),
        {
          mode: PRIVATE_FILE,
        },
      ),
    ]);
  }

  /**
   * The computer ended: the recording is complete from now. Its trace is scrubbed in the
   * background (a request for a file waits for it); its video is encoded when first asked for
   * (most recordings are never watched, and encoding every one would cost what the recorder must
   * not), its frames kept until then.
   */
  end(computerId: string, reason: string): void {
    const active = this.active.get(computerId);
    if (!active) return;
    active.stopWatching?.();
    const endedAt = Date.now();
    this.write(active, {
      type: 'recording_ended',
      computer_id: computerId,
      timestamp: new Date(endedAt).toISOString(),
      reason,
    });
    this.flush(active);
    this.active.delete(computerId);
    // The row turns complete once its files are: every reader waits for `finishing`.
    const finished = (async () => {
      try {
        await new Promise<void>((resolve) => active.events.end(resolve));
        await active.lastLook;
        await (await active.video)?.settled();
        await Promise.allSettled(active.later);
        await this.scrubTrace(computerId, active.dir);
      } finally {
        const size = await sizeOf(active.dir).catch(() => 0);
        this.deps.store.finish(computerId, endedAt, reason, size);
      }
    })()
      .catch((error: unknown) =>
        this.deps.log?.(`recording ${computerId}: could not finish (${String(error)})`),
      )
      .finally(() => {
        this.finishing.delete(computerId);
        void this.sweep();
      });
    this.finishing.set(computerId, finished);
  }

  // ---- reading ----

  /** A recording as GET …/recording answers it. */
  async view(org: string, computerId: string): Promise<Recording> {
    const row = this.row(org, computerId);
    // Just ended: its files are final in a moment (the video is being encoded).
    await this.finishing.get(computerId);
    return this.viewOf(this.deps.store.get(org, computerId) ?? row);
  }

  async list(org: string, limit: number): Promise<Recording[]> {
    let rows = this.deps.store.list(org, limit);
    const ending = rows.flatMap((row) => this.finishing.get(row.computer_id) ?? []);
    // Just-ended ones are listed as they are once finished (complete, with their size).
    if (ending.length > 0) {
      await Promise.all(ending);
      rows = this.deps.store.list(org, limit);
    }
    return Promise.all(rows.map((row) => this.viewOf(row)));
  }

  /**
   * The downloads kept with a browser computer's recording, for after the computer ended;
   * undefined when there is no such recording (none, deleted, dropped, or a desktop's).
   */
  downloadsOf(org: string, computerId: string): DownloadFolder | undefined {
    const row = this.deps.store.get(org, computerId);
    return row && this.downloads(row);
  }

  private downloads(row: RecordingRow): DownloadDir | undefined {
    if (row.kind !== 'browser' || row.status === 'none' || row.status === 'dropped')
      return undefined;
    return new DownloadDir(join(this.dirOf(row.computer_id), RECORDED_DOWNLOADS));
  }

  /** The path of a recorded file, or a 404 that says why there is none. */
  async file(
    org: string,
    computerId: string,
    key: Exclude<RecordingFileKey, 'video'>,
  ): Promise<string> {
    const row = await this.settled(org, computerId);
    if (key !== 'events' && row.kind !== 'browser') {
      throw notFound(
        `computer ${computerId} is a ${row.kind} computer: only browser computers have a ${RECORDING_FILES[key].name}`,
        'id',
      );
    }
    const path = join(this.dirOf(computerId), FILE_NAMES[key]);
    const exists = await stat(path).then(
      () => true,
      () => false,
    );
    if (!exists) {
      const when = row.status === 'recording' ? ' yet (it is written when the computer ends)' : '';
      throw notFound(
        `the recording of ${computerId} has no ${RECORDING_FILES[key].name}${when}`,
        'id',
      );
    }
    return path;
  }

  /** The video so far (while recording) or the final one. */
  async video(org: string, computerId: string): Promise<string> {
    const row = await this.settled(org, computerId);
    const active = this.active.get(computerId);
    const path = active
      ? await (await active.video)?.render(Date.now(), active.chapters)
      : await this.finalVideo(row);
    if (!path) {
      throw notFound(
        `the recording of ${computerId} has no video: ${row.status === 'recording' ? 'its screen has not been captured yet' : 'no frame of its screen was recorded, or no ffmpeg was found to encode it (recording.ffmpeg_path)'}`,
        'id',
      );
    }
    return path;
  }

  /** An ended recording's video.webm, encoded on first need (concurrent asks share one encode). */
  private finalVideo(row: RecordingRow): Promise<string | undefined> {
    const id = row.computer_id;
    let encoding = this.encoding.get(id);
    if (!encoding) {
      encoding = this.encodeFinal(row).finally(() => this.encoding.delete(id));
      this.encoding.set(id, encoding);
    }
    return encoding;
  }

  private async encodeFinal(row: RecordingRow): Promise<string | undefined> {
    const dir = this.dirOf(row.computer_id);
    const path = join(dir, FILE_NAMES.video);
    if (await sizeOfFile(path)) return path;
    const video = await VideoTrack.open(dir, { startedAt: row.started_at, ffmpeg: this.ffmpeg });
    if (video.frames === 0) return undefined;
    const { chapters } = await this.readEvents(dir, row.started_at);
    const done = await video.finish(row.ended_at ?? Date.now(), chapters);
    this.deps.store.setSize(row.computer_id, await sizeOf(dir));
    return done;
  }

  /** What writes a browser computer's HAR 1.2 document (checked to exist first). */
  async har(org: string, computerId: string): Promise<(out: Writable) => Promise<void>> {
    await this.file(org, computerId, 'har');
    const dir = this.dirOf(computerId);
    return (out) => writeHar(dir, out);
  }

  /** A task's bundle (docs/API.md §13): its timeline, model calls and its computer's recording. */
  async writeBundle(org: string, task: Task, events: TaskEvent[], out: Writable): Promise<void> {
    const computerId = this.deps.store.computerOfTask(task.task_id);
    if (computerId) await this.finishing.get(computerId);
    const recorded = this.taskRecording(org, computerId);
    // The bundle plays the video: an ended recording's is made now if it was never asked for.
    if (recorded && recorded.row.status === 'complete') {
      await this.finalVideo(recorded.row).catch((error: unknown) => {
        this.deps.log?.(
          `recording ${recorded.row.computer_id}: no video for the bundle: ${String(error)}`,
        );
      });
    }
    const row = recorded && this.deps.store.get(org, recorded.row.computer_id);
    await writeTaskBundle(
      {
        task,
        events,
        recordingDir: recorded?.dir,
        recording: row ? await this.viewOf(row) : undefined,
        writeHar: (harOut) => writeHar(recorded!.dir, harOut),
        scrub: (text) => this.deps.scrubber.scrub(text),
      },
      out,
    );
  }

  /** Deletes an ended recording's files; its row says it was deleted. */
  async delete(org: string, computerId: string): Promise<void> {
    const row = await this.settled(org, computerId);
    await this.encoding.get(computerId)?.catch(() => {});
    if (row.status === 'recording') {
      throw invalidRequest(
        `computer ${computerId} is still running and recording; delete the computer first (DELETE /computers/${computerId})`,
        'id',
      );
    }
    await rm(this.dirOf(computerId), { recursive: true, force: true });
    this.deps.store.drop(computerId, 'deleted by a request');
  }

  /** The folder and index row of a task's recording (its computer's), if it was recorded. */
  private taskRecording(
    org: string,
    computerId: string | undefined,
  ): { row: RecordingRow; dir: string } | undefined {
    const row = computerId && this.deps.store.get(org, computerId);
    if (!row || (row.status !== 'recording' && row.status !== 'complete')) return undefined;
    return { row, dir: this.dirOf(row.computer_id) };
  }

  private row(org: string, computerId: string): RecordingRow {
    const row = this.deps.store.get(org, computerId);
    if (!row) throw notFound(`no recording of computer ${computerId}`, 'id');
    if (row.status === 'dropped') {
      throw notFound(`the recording of ${computerId} was dropped (${row.dropped_reason})`, 'id');
    }
    return row;
  }

  /** A row with files to read, once a just-ended recording's files are final. */
  private async settled(org: string, computerId: string): Promise<RecordingRow> {
    this.readable(org, computerId);
    await this.finishing.get(computerId);
    return this.readable(org, computerId);
  }

  /** A row with files to read. */
  private readable(org: string, computerId: string): RecordingRow {
    const row = this.row(org, computerId);
    if (row.status === 'none') {
      throw notFound(
        `computer ${computerId} was created with "recording": false: nothing was recorded`,
        'id',
      );
    }
    return row;
  }

  private async viewOf(row: RecordingRow): Promise<Recording> {
    const active = this.active.get(row.computer_id);
    const endedAt = row.ended_at ?? (row.status === 'none' ? null : undefined);
    const files = row.status === 'none' ? [] : await this.filesOf(row, active);
    return {
      computer_id: row.computer_id,
      kind: row.kind,
      status: row.status === 'dropped' ? 'none' : row.status,
      started_at: row.status === 'none' ? null : new Date(row.started_at).toISOString(),
      ended_at: endedAt ? new Date(endedAt).toISOString() : null,
      duration_ms:
        row.status === 'none' ? null : Math.max(0, (endedAt ?? Date.now()) - row.started_at),
      // Being written: what is on disk now.
      size_bytes: active ? files.reduce((sum, file) => sum + file.size_bytes, 0) : row.size_bytes,
      files,
      downloads: (await this.downloads(row)?.list()) ?? [],
      task_ids: this.deps.store.tasks(row.computer_id),
    };
  }

  private async filesOf(row: RecordingRow, active: Active | undefined): Promise<RecordingFile[]> {
    const dir = this.dirOf(row.computer_id);
    const files: RecordingFile[] = [];
    const video = active ? await active.video : undefined;
    const sizes = {
      video: active
        ? video && video.frames > 0
          ? video.bytes
          : undefined
        : ((await sizeOfFile(join(dir, FILE_NAMES.video))) ?? (await unencodedBytes(dir))),
      events: await sizeOfFile(join(dir, FILE_NAMES.events)),
      har: row.kind === 'browser' ? await sizeOfFile(join(dir, FILE_NAMES.har)) : undefined,
      trace: row.kind === 'browser' ? await sizeOfFile(join(dir, FILE_NAMES.trace)) : undefined,
    };
    for (const key of ['video', 'events', 'har', 'trace'] as const) {
      const size = sizes[key];
      if (size !== undefined) files.push({ ...RECORDING_FILES[key], size_bytes: size });
    }
    return files;
  }

  /**
   * Queues an event for the events file, written (serialized, scrubbed) right after the current
   * turn: an action's answer does not wait for its events to be recorded (an html action's event
   * holds the whole page).
   */
  private write(active: Active, entry: RecordedEvent): void {
    active.lastAt = Date.now();
    active.queued.push(entry);
    if (active.queued.length === 1) setImmediate(() => this.flush(active));
  }

  private flush(active: Active): void {
    if (active.queued.length === 0) return;
    const lines = active.queued.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    active.queued = [];
    active.events.write(this.deps.scrubber.scrub(lines));
  }

  private dirOf(computerId: string): string {
    return join(this.deps.root, computerId);
  }

  /** The recording's events file: its chapters, the last moment in it, and its text. */
  private async readEvents(
    dir: string,
    startedAt: number,
  ): Promise<{ chapters: Chapter[]; lastAt: number; text: string }> {
    const text = await readFile(join(dir, FILE_NAMES.events), 'utf8').catch(() => '');
    const chapters: Chapter[] = [];
    let lastAt = startedAt;
    for (const line of text.split('\n')) {
      const entry = parseLine(line);
      if (!entry) continue;
      lastAt = Math.max(lastAt, Date.parse(entry.timestamp));
      if (entry.type === 'action_request') {
        chapters.push({
          at: Date.parse(entry.timestamp),
          title: this.deps.scrubber.scrub(chapterTitle(entry)),
        });
      }
    }
    return { chapters, lastAt, text };
  }

  /** A recording left open by a killed run: ended at the last thing it recorded. */
  private async recover(row: RecordingRow): Promise<void> {
    const dir = this.dirOf(row.computer_id);
    const { lastAt, text } = await this.readEvents(dir, row.started_at);
    const video = await VideoTrack.open(dir, {
      startedAt: row.started_at,
      ffmpeg: this.ffmpeg,
    }).catch(() => undefined);
    const endedAt = Math.max(lastAt, video?.lastFrameAt ?? 0);
    const ended: RecordedEvent = {
      type: 'recording_ended',
      computer_id: row.computer_id,
      timestamp: new Date(endedAt).toISOString(),
      reason: 'benchtop_stopped',
    };
    // A line torn by the kill is ended first, so the final line is whole.
    const separator = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    await writeFile(join(dir, FILE_NAMES.events), `${separator}${JSON.stringify(ended)}\n`, {
      flag: 'a',
      mode: PRIVATE_FILE,
    }).catch(() => {});
    if (row.kind === 'browser' && (await recoverTrace(dir).catch(() => false))) {
      await this.scrubTrace(row.computer_id, dir);
    }
    this.deps.store.finish(row.computer_id, endedAt, 'benchtop_stopped', await sizeOf(dir));
  }

  /** A trace records typed text and URLs as they were: its secrets go before anyone reads it. */
  private async scrubTrace(computerId: string, dir: string): Promise<void> {
    const trace = join(dir, FILE_NAMES.trace);
    if (!(await sizeOfFile(trace))) return;
    await scrubZip(trace, (text) => this.deps.scrubber.scrub(text)).catch((error: unknown) => {
      this.deps.log?.(
        `recording ${computerId}: the trace could not be scrubbed, so it was removed: ${String(error)}`,
      );
      return rm(trace, { force: true });
    });
  }

  /** Drops ended recordings past retention, then the oldest while all of them pass the disk cap. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepNow()
      .catch((error: unknown) =>
        this.deps.log?.(`could not sweep old recordings: ${String(error)}`),
      )
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepNow(): Promise<void> {
    const { retention_days: days, max_disk_mb: capMb } = this.deps.settings();
    const now = Date.now();
    const ended = this.deps.store.ended();
    const kept: RecordingRow[] = [];
    for (const row of ended) {
      if ((row.ended_at ?? row.started_at) < now - days * DAY_MS) {
        await this.drop(row, `older than recording.retention_days (${days} days)`);
      } else {
        kept.push(row);
      }
    }
    const activeBytes = await Promise.all(
      [...this.active.values()].map(async (active) => sizeOf(active.dir)),
    );
    let total =
      kept.reduce((sum, row) => sum + row.size_bytes, 0) + activeBytes.reduce((a, b) => a + b, 0);
    const cap = capMb * 1024 * 1024;
    for (const row of kept) {
      if (total <= cap) break;
      const busy = this.finishing.has(row.computer_id) || this.encoding.has(row.computer_id);
      if (row.status !== 'complete' || busy) continue;
      await this.drop(row, `the oldest over recording.max_disk_mb (${capMb} MB)`);
      total -= row.size_bytes;
    }
    this.deps.store.forgetDropped(now - FORGET_DROPPED_MS);
  }

  private async drop(row: RecordingRow, reason: string): Promise<void> {
    await rm(this.dirOf(row.computer_id), { recursive: true, force: true });
    this.deps.store.drop(row.computer_id, reason);
  }

  /** Stops recording (Benchtop is stopping: the registry ended every computer before). */
  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    for (const id of [...this.active.keys()]) this.end(id, 'shutdown');
    await Promise.all(this.finishing.values());
    await Promise.all([...this.encoding.values()].map((encoding) => encoding.catch(() => {})));
    await this.sweeping;
  }
}

/** What `promise` gives within `ms`, else undefined; a rejection is undefined too. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function parseLine(line: string): RecordedEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const entry = JSON.parse(line) as RecordedEvent;
    return typeof entry.timestamp === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}

async function sizeOfFile(path: string): Promise<number | undefined> {
  return stat(path).then(
    (info) => info.size,
    () => undefined,
  );
}

/** Bytes under a folder (its files, recursively). */
async function sizeOf(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  const sizes = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => sizeOfFile(join(entry.parentPath, entry.name))),
  );
  return sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
}

/** Frames (and encoded stretches of them) of a video not made yet: what the video will come from. */
async function unencodedBytes(dir: string): Promise<number | undefined> {
  const frames = await sizeOfFile(join(dir, 'frames.ndjson'));
  if (!frames) return undefined;
  return (await sizeOf(join(dir, 'frames'))) + (await sizeOf(join(dir, 'segments')));
}

/** Makes a folder of an active recording once; its path. */
async function made(active: Active, folder: string): Promise<string> {
  if (!active.folders.has(folder)) {
    await mkdir(folder, { recursive: true, mode: PRIVATE_DIR });
    active.folders.add(folder);
  }
  return folder;
}
