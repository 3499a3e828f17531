import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { Budgets, MAX_TASK_STEPS, StartTaskBody, type Task } from '../../shared/tasks.js';
import { answer, guarded } from './mcp-results.js';
import type { McpSession } from './mcp-session.js';

const TaskId = z.string().min(1).describe('The id start_task returned.');

/** What a caller needs to follow a task; the full record and its events are the REST API's. */
const summary = (task: Task) => ({
  task_id: task.task_id,
  status: task.status,
  paused_reason: task.paused_reason,
  paused_by: task.paused_by,
  computer_id: task.computer_id,
  steps: task.steps,
  max_steps: task.max_steps,
  result: task.result,
  error: task.error,
  usage: task.usage,
});

export function registerTaskTools(server: McpServer, session: McpSession): void {
  const { core, org } = session;

  server.registerTool(
    'start_task',
    {
      description:
        "Start an agent task: Benchtop's own model loop works on an instruction on a computer " +
        '(a new one of `kind`, or computer_id, e.g. the current computer) until it is done. ' +
        'Returns at once with the task id; follow it with task_status.',
      inputSchema: {
        instruction: z.string().min(1).max(100_000),
        kind: z.enum(['browser', 'desktop']).default('browser'),
        computer_id: z.string().min(1).optional(),
        model: z.string().min(1).optional().describe('Default: the models.default setting.'),
        max_steps: z.number().int().min(1).max(MAX_TASK_STEPS).default(50),
        ...Budgets.shape,
      },
    },
    (args) =>
      guarded(async () => {
        const run = await core.tasks.start(org, StartTaskBody.parse(args));
        const { task_id, computer_id } = run.task;
        return answer(`Started task ${task_id} on computer ${computer_id}.`, {
          task_id,
          status: 'running',
          computer_id,
        });
      }),
  );

  server.registerTool(
    'task_status',
    {
      description:
        "A task's status (running, paused, completed, failed, max_steps, cancelled), why it " +
        'is paused, its steps, result or error, and usage.',
      inputSchema: { task_id: TaskId },
    },
    ({ task_id }) =>
      guarded(() => {
        const task = core.tasks.get(org, task_id);
        return answer(`Task ${task_id} is ${task.status}.`, summary(task));
      }),
  );

  const change = (
    name: string,
    description: string,
    apply: (id: string) => { status: string },
    verb: string,
  ) =>
    server.registerTool(name, { description, inputSchema: { task_id: TaskId } }, ({ task_id }) =>
      guarded(() => {
        const { status } = apply(task_id);
        return answer(`Task ${task_id} ${verb}; its status is now ${status}.`);
      }),
    );
  change(
    'pause_task',
    'Pause a running task after its current step (resume_task goes on).',
    (id) => core.tasks.pause(org, id, session.requester()),
    'was paused',
  );
  change(
    'resume_task',
    'Resume a paused task.',
    (id) => core.tasks.resume(org, id, undefined, session.requester()),
    'was resumed',
  );
  change(
    'cancel_task',
    'Cancel a task: it stops at once, whatever it was doing.',
    (id) => core.tasks.cancel(org, id, session.requester()),
    'was cancelled',
  );

  server.registerTool(
    'message_task',
    {
      description:
        "Send a message to a task's model (a hint, a correction); it reads it before its next step.",
      inputSchema: { task_id: TaskId, message: z.string().min(1).max(100_000) },
    },
    ({ task_id, message }) =>
      guarded(() => {
        const { status } = core.tasks.message(org, task_id, message, session.requester());
        return answer(`Message sent to task ${task_id}; its status is ${status}.`);
      }),
  );
}
