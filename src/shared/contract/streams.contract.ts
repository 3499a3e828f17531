import { z } from 'zod';
import { ComputerEvent, StatusEvent } from '../events.js';
import {
  ComputerFrame,
  CursorPosition,
  ScreencastFrame,
  ScreencastQuery,
  ScreencastsQuery,
} from '../screencast.js';
import { ExecBody, ExecLine, ExecSyncBody, ExecSyncResult } from '../exec.js';
import { IdParams, json, ndjson, route, sse } from './route.js';

/** Events of a screencast: frames (unnamed), `cursor_position` (desktops), the final status. */
export const ScreencastEvent = z.union([ScreencastFrame, CursorPosition, StatusEvent]);

export const STREAM_ROUTES = {
  'streams.events': route({
    name: 'streams.events',
    method: 'get',
    path: '/computers/{id}/events',
    params: IdParams,
    answer: sse(ComputerEvent),
    summary:
      "Follow the computer's events (actions, shell output, tabs, navigations, status) as Server-Sent Events; ends after it terminates",
    tag: 'streams',
  }),
  'streams.screencast': route({
    name: 'streams.screencast',
    method: 'get',
    path: '/computers/{id}/screencast',
    params: IdParams,
    query: ScreencastQuery,
    answer: sse(ScreencastEvent),
    summary:
      'Live JPEG frames (SSE, unnamed events); desktops also send named cursor_position events. Ends with a status event when the computer ends.',
    tag: 'streams',
  }),
  'streams.screencasts': route({
    name: 'streams.screencasts',
    method: 'get',
    path: '/screencasts',
    query: ScreencastsQuery,
    answer: sse(z.union([ComputerFrame, StatusEvent])),
    summary:
      "Several computers' live frames on one connection, each with its computer_id; a status event when one ends (Benchtop extension: a browser opens at most six connections to a server)",
    tag: 'streams',
  }),
} as const;

export const EXEC_ROUTES = {
  'exec.stream': route({
    name: 'exec.stream',
    method: 'post',
    path: '/computers/{id}/exec',
    params: IdParams,
    body: ExecBody,
    answer: ndjson(ExecLine),
    summary:
      'Run a shell command, streaming its output as NDJSON lines and ending with its exit code; input it cannot start with is one error line',
    tag: 'shell',
  }),
  'exec.sync': route({
    name: 'exec.sync',
    method: 'post',
    path: '/computers/{id}/exec/sync',
    params: IdParams,
    body: ExecSyncBody,
    answer: json(ExecSyncResult),
    summary: 'Run a shell command and answer its output and exit code once it ends',
    tag: 'shell',
  }),
} as const;
