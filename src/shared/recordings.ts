import { z } from 'zod';
import { Timestamp } from './common.js';
import { ComputerDownload, ComputerKind } from './computers.js';
import { ComputerEvent } from './events.js';

/** The flight recorder (docs/API.md §13): what every computer leaves behind. */

/** The files a recording may hold, by the name GET …/recording lists them under. */
export const RECORDING_FILES = {
  video: { name: 'video.webm', content_type: 'video/webm' },
  events: { name: 'events.ndjson', content_type: 'application/x-ndjson' },
  har: { name: 'recording.har', content_type: 'application/json' },
  trace: { name: 'trace.zip', content_type: 'application/zip' },
} as const;
export type RecordingFileKey = keyof typeof RECORDING_FILES;

export const RecordingStatus = z
  .enum(['recording', 'complete', 'none'])
  .describe(
    '`recording` while the computer runs, `complete` once it ended (or Benchtop stopped while it ran: kept up to that moment), `none` when it was created with `"recording": false`.',
  );
export type RecordingStatus = z.infer<typeof RecordingStatus>;

export const RecordingFile = z.object({
  name: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int().min(0),
});
export type RecordingFile = z.infer<typeof RecordingFile>;

export const Recording = z
  .object({
    computer_id: z.string(),
    kind: ComputerKind,
    status: RecordingStatus,
    started_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    duration_ms: z.number().int().min(0).nullable(),
    size_bytes: z.number().int().min(0),
    files: z.array(RecordingFile),
    downloads: z
      .array(ComputerDownload)
      .describe(
        'What the browser computer downloaded, kept with its recording (GET /computers/{id}/downloads/{name}).',
      ),
    task_ids: z
      .array(z.string())
      .describe('Agent tasks that ran on the computer while it was recorded (their bundles).'),
  })
  .meta({ id: 'Recording' });
export type Recording = z.infer<typeof Recording>;

export const RecordingListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe('At most this many recordings, the newest (default 100, at most 1000).'),
});

export const RecordingList = z.object({ data: z.array(Recording) }).meta({ id: 'RecordingList' });
export type RecordingList = z.infer<typeof RecordingList>;

/** A console message of a browser computer's page (recording only; the events stream has none). */
export const ConsoleEntry = z.object({
  type: z.literal('console'),
  computer_id: z.string(),
  timestamp: Timestamp,
  level: z
    .string()
    .describe(
      'log, info, warning, error, debug… as the page logged it; `pageerror` for an uncaught exception.',
    ),
  text: z.string(),
  url: z.string().nullable().describe('The script that logged it, when known.'),
  tab_id: z.string().nullable(),
});

/**
 * One line of GET /computers/{id}/recording/events: every event the events stream carried (an
 * action_request a person sent from the live view has `source: "live_view"`), console messages of
 * a browser's pages, and a final `recording_ended` line.
 */
export const RecordedEvent = z.union([
  ComputerEvent,
  ConsoleEntry,
  z.object({
    type: z.literal('recording_ended'),
    computer_id: z.string(),
    timestamp: Timestamp,
    reason: z
      .string()
      .describe(
        'Why it ended: the termination reason, or `benchtop_stopped` when Benchtop was killed while it ran (found at the next start).',
      ),
  }),
]);
export type RecordedEvent = z.infer<typeof RecordedEvent>;
