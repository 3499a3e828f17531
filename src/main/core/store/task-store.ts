import {
  unstartedTaskFields,
  type Task,
  type TaskEvent,
  type TaskStatus,
} from '../../../shared/tasks.js';
import type { Db } from './database.js';
import type { OrgStorage } from './org-storage.js';

/** Which tasks a listing wants; everything given must match. */
export type TaskFilter = {
  computerId?: string;
  statuses?: readonly TaskStatus[];
  /** At most this many, the newest (default: all). */
  limit?: number;
};

/** Tasks and their event logs per organization, durable in SQLite. */
export class TaskStore {
  private readonly statements;

  /** Without `storage` nothing is capped (tools reading a data dir). */
  constructor(
    db: Db,
    private readonly storage?: OrgStorage,
  ) {
    this.statements = {
      insert: db.prepare(
        'INSERT INTO tasks (id, org, created_at, status, body) VALUES (?, ?, ?, ?, ?)',
      ),
      update: db.prepare('UPDATE tasks SET status = ?, body = ? WHERE id = ?'),
      get: db.prepare('SELECT body FROM tasks WHERE id = ? AND org = ?'),
      list: db.prepare(
        `SELECT body FROM tasks WHERE org = @org
           AND (@computer IS NULL OR json_extract(body, '$.computer_id') = @computer)
           AND (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
         ORDER BY created_at DESC, rowid DESC LIMIT @limit`,
      ),
      unfinished: db.prepare("SELECT org, body FROM tasks WHERE status IN ('running', 'paused')"),
      append: db.prepare('INSERT INTO task_events (task_id, seq, body) VALUES (?, ?, ?)'),
      events: db.prepare('SELECT body FROM task_events WHERE task_id = ? ORDER BY seq'),
      lastSeq: db.prepare('SELECT MAX(seq) AS seq FROM task_events WHERE task_id = ?'),
      lastOf: db.prepare(
        `SELECT body FROM task_events WHERE task_id = ?
           AND json_extract(body, '$.type') IN (SELECT value FROM json_each(?))
         ORDER BY seq DESC LIMIT 1`,
      ),
    };
  }

  /** Stores a new task; refused before anything is written when over a storage limit. */
  insert(org: string, task: Task): void {
    const body = JSON.stringify(task);
    this.storage?.admit(org, Buffer.byteLength(body), 'task', 'instruction');
    this.statements.insert.run(task.task_id, org, task.created_at, task.status, body);
  }

  update(task: Task): void {
    this.statements.update.run(task.status, JSON.stringify(task), task.task_id);
  }

  get(org: string, id: string): Task | undefined {
    const row = this.statements.get.get(id, org) as { body: string } | undefined;
    return row && parseTask(row.body);
  }

  /** Newest first. */
  list(org: string, filter: TaskFilter = {}): Task[] {
    const rows = this.statements.list.all({
      org,
      computer: filter.computerId ?? null,
      statuses: filter.statuses ? JSON.stringify(filter.statuses) : null,
      limit: filter.limit ?? -1,
    }) as Array<{ body: string }>;
    return rows.map((row) => parseTask(row.body));
  }

  /** Tasks a previous run left running or paused: nothing drives them now. */
  unfinished(): Array<{ org: string; task: Task }> {
    return (this.statements.unfinished.all() as Array<{ org: string; body: string }>).map(
      (row) => ({ org: row.org, task: parseTask(row.body) }),
    );
  }

  append(taskId: string, seq: number, event: TaskEvent): void {
    this.statements.append.run(taskId, seq, JSON.stringify(event));
  }

  events(taskId: string): TaskEvent[] {
    return (this.statements.events.all(taskId) as Array<{ body: string }>).map(
      (row) => JSON.parse(row.body) as TaskEvent,
    );
  }

  /** The newest of the task's events of these types, read without the rest of its log. */
  lastEvent(taskId: string, types: readonly string[]): TaskEvent | undefined {
    const row = this.statements.lastOf.get(taskId, JSON.stringify(types)) as
      { body: string } | undefined;
    return row && (JSON.parse(row.body) as TaskEvent);
  }

  nextSeq(taskId: string): number {
    const row = this.statements.lastSeq.get(taskId) as { seq: number | null };
    return (row.seq ?? -1) + 1;
  }
}

/**
 * A stored task; one stored before paused_reason, paused_by, usage and budgets existed (or before
 * usage had cached_tokens) gets their defaults.
 */
function parseTask(body: string): Task {
  const unstarted = unstartedTaskFields();
  const task = JSON.parse(body) as Task;
  return { ...unstarted, ...task, usage: { ...unstarted.usage, ...task.usage } };
}
