import { TERMINAL_EVENTS, type TaskEvent } from '../../../shared/tasks.js';
import type { Core } from '../../core/create-core.js';
import type { SseStream } from '../sse.js';
import type { Handlers } from '../register-routes.js';

type TaskRouteName =
  | 'tasks.start'
  | 'tasks.stream'
  | 'tasks.list'
  | 'tasks.get'
  | 'tasks.events'
  | 'tasks.pause'
  | 'tasks.resume'
  | 'tasks.cancel'
  | 'tasks.message'
  | 'tasks.handoff'
  | 'tasks.script'
  | 'tasks.replay';

export function taskHandlers(core: Core): Pick<Handlers, TaskRouteName> {
  /** Replays the task's events, follows it live and closes after the terminal event. */
  const follow = (org: string, id: string, sse: SseStream) => {
    const send = (event: TaskEvent) => {
      sse.send(event);
      if (TERMINAL_EVENTS.has(event.type)) sse.end();
    };
    const { replay, done, unsubscribe } = core.tasks.follow(org, id, send);
    sse.onClose(unsubscribe);
    for (const event of replay) send(event);
    if (done) sse.end();
  };

  return {
    'tasks.start': async ({ body, principal }) => {
      const run = await core.tasks.start(principal.org, body);
      return { task_id: run.task.task_id, status: 'running', computer_id: run.task.computer_id };
    },
    'tasks.stream': async ({ body, principal, openEvents }) => {
      const run = await core.tasks.start(principal.org, body);
      follow(principal.org, run.task.task_id, openEvents());
    },
    'tasks.list': ({ query, principal }) =>
      core.tasks.list(principal.org, {
        computerId: query.computer_id,
        statuses: query.status,
        limit: query.limit,
      }),
    'tasks.get': ({ params, principal }) => core.tasks.get(principal.org, params.id),
    'tasks.events': ({ params, principal, openEvents }) => {
      // Looked up before the stream opens: an unknown task is a plain 404.
      core.tasks.get(principal.org, params.id);
      follow(principal.org, params.id, openEvents());
    },
    'tasks.pause': ({ params, principal, requester }) =>
      core.tasks.pause(principal.org, params.id, requester),
    'tasks.resume': ({ body, params, principal, requester }) =>
      core.tasks.resume(principal.org, params.id, body.budgets, requester),
    'tasks.cancel': ({ params, principal, requester }) =>
      core.tasks.cancel(principal.org, params.id, requester),
    'tasks.message': ({ body, params, principal, requester }) =>
      core.tasks.message(principal.org, params.id, body.message, requester),
    'tasks.handoff': ({ body, params, principal, requester }) =>
      core.tasks.handOff(principal.org, params.id, body.reason, requester),
    'tasks.script': ({ params, query, principal, res }) => {
      const script = core.tasks.script(principal.org, params.id, query.lang);
      const name = `${params.id}.${query.lang === 'python' ? 'py' : 'ts'}`;
      // The file name first: attachment() would set the type from its extension.
      res.attachment(name).type('text/plain; charset=utf-8').send(script);
    },
    'tasks.replay': async ({ body, params, principal }) => {
      const run = await core.tasks.replay(principal.org, params.id, body);
      return { task_id: run.task.task_id, status: 'running', computer_id: run.task.computer_id };
    },
  };
}
