import { z } from 'zod';
import {
  StartTaskBody,
  StartTaskResponse,
  Task,
  TaskEvent,
  TaskListQuery,
  TaskHandoffBody,
  TaskMessageBody,
  TaskResumeBody,
  TaskStatusAnswer,
} from '../tasks.js';
import { ReplayTaskBody, TaskScriptQuery } from '../task-scripts.js';
import { binary, IdParams, json, route, sse } from './route.js';

const tag = 'agent tasks';

const control = <V extends 'pause' | 'cancel'>(verb: V, summary: string) =>
  route({
    name: `tasks.${verb}`,
    method: 'post',
    path: `/agent/tasks/{id}/${verb}`,
    params: IdParams,
    answer: json(TaskStatusAnswer),
    summary,
    tag,
  });

export const TASK_ROUTES = {
  'tasks.start': route({
    name: 'tasks.start',
    method: 'post',
    path: '/agent/tasks',
    body: StartTaskBody,
    answer: json(StartTaskResponse),
    summary: 'Start an agent task; answers at once while it runs',
    tag,
  }),
  'tasks.stream': route({
    name: 'tasks.stream',
    method: 'post',
    path: '/agent/tasks/stream',
    body: StartTaskBody,
    answer: sse(TaskEvent),
    summary: 'Start an agent task and stream its events until the terminal one',
    tag,
  }),
  'tasks.list': route({
    name: 'tasks.list',
    method: 'get',
    path: '/agent/tasks',
    query: TaskListQuery,
    answer: json(z.array(Task)),
    summary: "The organization's tasks, newest first, optionally filtered",
    tag,
  }),
  'tasks.get': route({
    name: 'tasks.get',
    method: 'get',
    path: '/agent/tasks/{id}',
    params: IdParams,
    answer: json(Task),
    summary: 'One task',
    tag,
  }),
  'tasks.events': route({
    name: 'tasks.events',
    method: 'get',
    path: '/agent/tasks/{id}/events',
    params: IdParams,
    answer: sse(TaskEvent),
    summary: "The task's events so far, then live until the terminal one",
    tag,
  }),
  'tasks.pause': control(
    'pause',
    'Pause before the next step; the computer is free for a person meanwhile',
  ),
  'tasks.resume': route({
    name: 'tasks.resume',
    method: 'post',
    path: '/agent/tasks/{id}/resume',
    params: IdParams,
    body: TaskResumeBody,
    answer: json(TaskStatusAnswer),
    summary:
      'Continue a paused task from a fresh screenshot; `budgets` raises the ones it reached (Benchtop extension)',
    tag,
  }),
  'tasks.handoff': route({
    name: 'tasks.handoff',
    method: 'post',
    path: '/agent/tasks/{id}/handoff',
    params: IdParams,
    body: TaskHandoffBody,
    answer: json(TaskStatusAnswer),
    summary:
      'Pause the task for a person, saying why; on resume the model is told what they did (Benchtop extension)',
    tag,
  }),
  'tasks.cancel': control('cancel', 'End a running or paused task (exit code 130)'),
  'tasks.message': route({
    name: 'tasks.message',
    method: 'post',
    path: '/agent/tasks/{id}/messages',
    params: IdParams,
    body: TaskMessageBody,
    answer: json(TaskStatusAnswer),
    summary: "Give the model a user message at the task's next step",
    tag,
  }),
  'tasks.script': route({
    name: 'tasks.script',
    method: 'get',
    path: '/agent/tasks/{id}/script',
    params: IdParams,
    query: TaskScriptQuery,
    answer: binary('text/plain'),
    summary:
      "The task's performed actions as a script against the official Lightcone SDK, each step checked first (Benchtop extension)",
    tag,
  }),
  'tasks.replay': route({
    name: 'tasks.replay',
    method: 'post',
    path: '/agent/tasks/{id}/replay',
    params: IdParams,
    body: ReplayTaskBody,
    answer: json(StartTaskResponse),
    summary:
      "A new task that repeats the task's actions without the model, healing a step whose screen moved with one model call (Benchtop extension)",
    tag,
  }),
} as const;
