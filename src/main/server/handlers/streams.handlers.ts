import type { ExecSyncResult } from '../../../shared/exec.js';
import type { ComputerEvent } from '../../../shared/events.js';
import type { ComputerSession } from '../../core/computers/computer-session.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError } from '../../core/errors.js';
import { keepWaiting } from '../keep-waiting.js';
import type { HandlerContext, Handlers } from '../register-routes.js';
import type { Routes } from '../../../shared/contract/routes.js';

type StreamRouteName =
  'streams.events' | 'streams.screencast' | 'streams.screencasts' | 'exec.stream' | 'exec.sync';

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

/** A shell command a route's request starts (or joins, a retry of it). */
function startCommand(
  core: Core,
  kind: 'exec' | 'exec_sync',
  request: Pick<
    HandlerContext<Routes['exec.stream']>,
    'params' | 'principal' | 'requestId' | 'retried' | 'requester' | 'closed'
  > & { body: Parameters<Core['computers']['exec']>[3] },
): ReturnType<Core['computers']['exec']> {
  const { body, params, principal, requestId, retried, requester, closed } = request;
  return core.computers.exec(principal.org, params.id, kind, body, {
    requestId,
    retried,
    requester,
    signal: closed,
  });
}

export const streamHandlers = (core: Core): Pick<Handlers, StreamRouteName> => ({
  'streams.events': ({ params, principal, openEvents }) => {
    // Looked up before the stream opens: an unknown computer is a plain 404.
    const session = core.computers.get(principal.org, params.id);
    const stream = openEvents();
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

  'streams.screencast': ({ query, params, principal, openEvents }) => {
    const session = core.computers.get(principal.org, params.id);
    const stream = openEvents();
    if (session.status !== 'running') {
      stream.send(finalStatus(session));
      return stream.end();
    }
    const stop = core.screencasts.watch(session, {
      fps: query.fps,
      quality: query.quality,
      maxWidth: query.max_width,
      onFrame: (event) => stream.sendLatest(event),
      onCursor: (position) => stream.send(position, 'cursor_position'),
    });
    stream.onClose(stop);
    const ended = () => {
      stream.send(finalStatus(session));
      stream.end();
    };
    session.ended.signal.addEventListener('abort', ended, { once: true });
    stream.onClose(() => session.ended.signal.removeEventListener('abort', ended));
  },

  'streams.screencasts': ({ query, principal, openEvents }) => {
    // Looked up before the stream opens: an unknown computer is a plain 404.
    const sessions = query.ids.map((id) => core.computers.get(principal.org, id));
    const stream = openEvents();
    let live = sessions.length;
    const ended = (session: ComputerSession) => {
      stream.send(finalStatus(session));
      live -= 1;
      if (live === 0) stream.end();
    };
    for (const session of sessions) {
      if (session.status !== 'running') {
        ended(session);
        continue;
      }
      const stop = core.screencasts.watch(session, {
        fps: query.fps,
        quality: query.quality,
        maxWidth: query.max_width,
        onFrame: (event) => stream.sendLatest({ ...event, computer_id: session.id }, session.id),
        onCursor: () => undefined,
      });
      const onEnd = () => ended(session);
      session.ended.signal.addEventListener('abort', onEnd, { once: true });
      stream.onClose(() => {
        stop();
        session.ended.signal.removeEventListener('abort', onEnd);
      });
    }
  },

  'exec.stream': async (request) => {
    const out = request.ndjson();
    // A command held for a person, or quiet longer than the SDKs' timeout, is kept alive.
    out.keepAlive((line) => 'type' in line && (line.type === 'exit' || line.type === 'error'));
    let run;
    try {
      run = await startCommand(core, 'exec', request);
    } catch (error) {
      // A command that cannot start is an error line in a 200 answer, as is any refusal once the
      // answer began (a person denied it after the heartbeat); others keep their status.
      if (!(error instanceof BenchtopError)) throw error;
      if (error.code !== 'invalid_request' && !out.started) throw error;
      return out.only({ type: 'error', code: error.code, message: error.message });
    }
    out.open();
    await run.follow((line) => out.write(line), out.closed);
    out.end();
  },

  'exec.sync': async (request): Promise<ExecSyncResult> => {
    // A command held for a person or running longer than the SDKs' timeout: kept alive.
    keepWaiting(request.res, (error) => ({ stdout: '', stderr: error.message, exit_code: -1 }));
    const run = await startCommand(core, 'exec_sync', request);
    const { stdout, stderr, exitCode, truncated } = await run.outcome();
    return { stdout, stderr, exit_code: exitCode, ...(truncated && { truncated: true as const }) };
  },
});
