import { RECORDING_FILES } from '../../../shared/recordings.js';
import type { Core } from '../../core/create-core.js';
import type { Handlers } from '../register-routes.js';
import { sendFile } from './send-file.js';

type RecordingRouteName =
  | 'recordings.list'
  | 'recordings.get'
  | 'recordings.delete'
  | 'recordings.video'
  | 'recordings.har'
  | 'recordings.trace'
  | 'recordings.events'
  | 'tasks.bundle';

/** docs/API.md §13: recordings, their files, and task bundles. */
export const recordingHandlers = (core: Core): Pick<Handlers, RecordingRouteName> => ({
  'recordings.list': async ({ query, principal }) => ({
    data: await core.recorder.list(principal.org, query.limit),
  }),
  'recordings.get': ({ params, principal }) => core.recorder.view(principal.org, params.id),
  'recordings.delete': ({ params, principal }) => core.recorder.delete(principal.org, params.id),
  'recordings.video': async ({ params, principal, res }) => {
    const path = await core.recorder.video(principal.org, params.id);
    await sendFile(res, path, RECORDING_FILES.video.content_type);
  },
  'recordings.har': async ({ params, principal, res }) => {
    const write = await core.recorder.har(principal.org, params.id);
    res.type('application/json').attachment(`${params.id}.har`);
    await write(res);
  },
  'recordings.trace': async ({ params, principal, res }) => {
    const path = await core.recorder.file(principal.org, params.id, 'trace');
    await sendFile(res, path, 'application/zip', `${params.id}-trace.zip`);
  },
  'recordings.events': async ({ params, principal, res }) => {
    const path = await core.recorder.file(principal.org, params.id, 'events');
    await sendFile(res, path, RECORDING_FILES.events.content_type);
  },
  'tasks.bundle': async ({ params, principal, res }) => {
    const task = core.tasks.get(principal.org, params.id);
    const events = core.tasks.events(principal.org, params.id);
    res.type('application/zip').attachment(`${params.id}.zip`);
    await core.recorder.writeBundle(principal.org, task, events, res);
  },
});
