import { z } from 'zod';
import {
  StartTaskBody,
  StartTaskResponse,
  Task,
  TaskEvent,
  TaskMessageBody,
  TaskStatusAnswer,
  TERMINAL_EVENTS,
} from '../../../shared/tasks.js';
import type { Core } from '../../core/create-core.js';
import type { Request, Response } from 'express';
import type { Routes } from '../route-spec.js';
import { openSse } from '../sse.js';

export function taskRoutes(routes: Routes, core: Core): void {
  const tag = 'agent tasks';

  /** Replays the task's events, follows it live and closes after the terminal event. */
  const stream = (org: string, id: string, req: Request, res: Response) => {
    const sse = openSse(req, res);
    const send = (event: TaskEvent) => {
      sse.send(event);
      if (TERMINAL_EVENTS.has(event.type)) sse.end();
    };
    const { replay, done, unsubscribe } = core.tasks.follow(org, id, send);
    sse.onClose(unsubscribe);
    for (const event of replay) send(event);
    if (done) sse.end();
  };

  routes.add(
    {
      method: 'post',
      path: '/agent/tasks',
      tag,
      summary: 'Start an agent task; answers at once while it runs',
      body: StartTaskBody,
      response: StartTaskResponse,
    },
    async ({ body, principal }) => {
      const run = await core.tasks.start(principal.org, body);
      return { task_id: run.task.task_id, status: 'running', computer_id: run.task.computer_id };
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/agent/tasks/stream',
      tag,
      summary: 'Start an agent task and stream its events until the terminal one',
      body: StartTaskBody,
      response: TaskEvent,
      produces: 'text/event-stream',
    },
    async ({ body, principal, req, res }) => {
      const run = await core.tasks.start(principal.org, body);
      stream(principal.org, run.task.task_id, req, res);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/agent/tasks',
      tag,
      summary: "The organization's tasks, newest first",
      response: z.array(Task),
    },
    ({ principal }) => core.tasks.list(principal.org),
  );

  routes.add(
    { method: 'get', path: '/agent/tasks/:id', tag, summary: 'One task', response: Task },
    ({ params, principal }) => core.tasks.get(principal.org, params.id!),
  );

  routes.add(
    {
      method: 'get',
      path: '/agent/tasks/:id/events',
      tag,
      summary: "The task's events so far, then live until the terminal one",
      response: TaskEvent,
      produces: 'text/event-stream',
    },
    ({ params, principal, req, res }) => {
      core.tasks.get(principal.org, params.id!);
      stream(principal.org, params.id!, req, res);
    },
  );

  const control = (verb: 'pause' | 'resume' | 'cancel', summary: string) =>
    routes.add(
      {
        method: 'post',
        path: `/agent/tasks/:id/${verb}`,
        tag,
        summary,
        response: TaskStatusAnswer,
      },
      ({ params, principal }) => core.tasks[verb](principal.org, params.id!),
    );
  control('pause', 'Pause before the next step; the computer is free for a person meanwhile');
  control('resume', 'Continue a paused task from a fresh screenshot');
  control('cancel', 'End a running or paused task (exit code 130)');

  routes.add(
    {
      method: 'post',
      path: '/agent/tasks/:id/messages',
      tag,
      summary: "Give the model a user message at the task's next step",
      body: TaskMessageBody,
      response: TaskStatusAnswer,
    },
    ({ body, params, principal }) => core.tasks.message(principal.org, params.id!, body.message),
  );
}
