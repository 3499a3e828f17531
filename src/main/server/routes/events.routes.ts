import { ComputerEvent } from '../../../shared/events.js';
import type { Core } from '../../core/create-core.js';
import type { ComputerSession } from '../../core/computers/computer-session.js';
import type { Routes } from '../route-spec.js';
import { openSse } from '../sse.js';

export function eventRoutes(routes: Routes, core: Core): void {
  routes.add(
    {
      method: 'get',
      path: '/computers/:id/events',
      tag: 'streams',
      summary:
        "Follow the computer's events (actions, shell output, tabs, navigations, status) as Server-Sent Events; ends after it terminates",
      response: ComputerEvent,
      produces: 'text/event-stream',
    },
    ({ params, principal, req, res }) => {
      // Looked up before the stream opens: an unknown computer is a plain 404.
      const session = core.computers.get(principal.org, params.id!);
      const stream = openSse(req, res);
      if (session.status === 'terminated') {
        stream.send(finalStatus(session));
        return stream.end();
      }
      const dispose = core.events.subscribe(session.id, (event) => {
        stream.send(event);
        if (event.type === 'status') stream.end();
      });
      stream.onClose(dispose);
    },
  );
}

/** The status event a stream ends with once its computer has ended. */
export function finalStatus(session: ComputerSession): ComputerEvent {
  return {
    type: 'status',
    computer_id: session.id,
    timestamp: new Date(session.terminatedAt!).toISOString(),
    status: 'terminated',
    termination_reason: session.terminationReason!,
  };
}
