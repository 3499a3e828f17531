import { ScreencastFrame, ScreencastQuery } from '../../../shared/screencast.js';
import type { Core } from '../../core/create-core.js';
import type { Routes } from '../route-spec.js';
import { openSse } from '../sse.js';
import { finalStatus } from './events.routes.js';

export function screencastRoutes(routes: Routes, core: Core): void {
  routes.add(
    {
      method: 'get',
      path: '/computers/:id/screencast',
      tag: 'streams',
      summary:
        'Live JPEG frames (SSE, unnamed events); desktops also send named cursor_position events. Ends with a status event when the computer ends.',
      query: ScreencastQuery,
      response: ScreencastFrame,
      produces: 'text/event-stream',
    },
    ({ query, params, principal, req, res }) => {
      // Looked up before the stream opens: an unknown computer is a plain 404.
      const session = core.computers.get(principal.org, params.id!);
      const sse = openSse(req, res);
      if (session.status !== 'running') {
        sse.send(finalStatus(session));
        sse.end();
        return undefined;
      }
      const stop = core.screencasts.watch(session, {
        fps: query.fps,
        quality: query.quality,
        maxWidth: query.max_width,
        onFrame: (frame) => sse.sendLatest(frame),
        onCursor: (position) => sse.send(position, 'cursor_position'),
      });
      sse.onClose(stop);
      const ended = () => {
        sse.send(finalStatus(session));
        sse.end();
      };
      session.ended.signal.addEventListener('abort', ended, { once: true });
      sse.onClose(() => session.ended.signal.removeEventListener('abort', ended));
      return undefined;
    },
  );
}
