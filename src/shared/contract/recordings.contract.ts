import { Recording, RecordingList, RecordingListQuery } from '../recordings.js';
import { binary, empty, IdParams, json, route } from './route.js';

const tag = 'recordings';

/** docs/API.md §13: every computer's recording, its files, and a task's offline bundle. */
export const RECORDING_ROUTES = {
  'recordings.list': route({
    name: 'recordings.list',
    method: 'get',
    path: '/recordings',
    query: RecordingListQuery,
    answer: json(RecordingList),
    summary: "The organization's recordings, newest first (Benchtop extension)",
    tag,
  }),
  'recordings.get': route({
    name: 'recordings.get',
    method: 'get',
    path: '/computers/{id}/recording',
    params: IdParams,
    answer: json(Recording),
    summary:
      "A computer's recording: status, times, size and files; while it runs and after it ended, until retention drops it",
    tag,
  }),
  'recordings.delete': route({
    name: 'recordings.delete',
    method: 'delete',
    path: '/computers/{id}/recording',
    params: IdParams,
    answer: empty,
    summary: 'Delete a recording of a computer that has ended (Benchtop extension)',
    tag,
  }),
  'recordings.video': route({
    name: 'recordings.video',
    method: 'get',
    path: '/computers/{id}/recording/video',
    params: IdParams,
    answer: binary('video/webm'),
    summary:
      "The screen as a WebM video over the computer's life, one chapter per action (Range requests supported)",
    tag,
  }),
  'recordings.har': route({
    name: 'recordings.har',
    method: 'get',
    path: '/computers/{id}/recording/har',
    params: IdParams,
    answer: binary('application/json'),
    summary: 'HAR 1.2 of every request the browser made (browser computers)',
    tag,
  }),
  'recordings.trace': route({
    name: 'recordings.trace',
    method: 'get',
    path: '/computers/{id}/recording/trace.zip',
    params: IdParams,
    answer: binary('application/zip'),
    summary: 'A Playwright trace that `playwright show-trace` opens (browser computers)',
    tag,
  }),
  'recordings.events': route({
    name: 'recordings.events',
    method: 'get',
    path: '/computers/{id}/recording/events',
    params: IdParams,
    answer: binary('application/x-ndjson'),
    summary:
      "NDJSON of every event the computer's events stream carried, console messages and a person's live-view inputs",
    tag,
  }),
  'tasks.bundle': route({
    name: 'tasks.bundle',
    method: 'get',
    path: '/agent/tasks/{id}/bundle',
    params: IdParams,
    answer: binary('application/zip'),
    summary:
      "One zip to review a task offline: index.html (timeline synced with the video), task.json, events.ndjson, model/, and the computer's video, HAR and trace",
    tag: 'agent tasks',
  }),
} as const;
