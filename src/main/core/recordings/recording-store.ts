import type { ComputerKind } from '../../../shared/computers.js';
import type { Db } from '../store/database.js';

export type RecordingRowStatus = 'recording' | 'complete' | 'none' | 'dropped';

export type RecordingRow = {
  computer_id: string;
  org: string;
  kind: ComputerKind;
  status: RecordingRowStatus;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  size_bytes: number;
  dropped_reason: string | null;
};

/**
 * The index of recordings in SQLite: who owns each, its state and times, the tasks that ran on
 * it. A dropped recording keeps its row (without files), so asking for it says why it is gone.
 */
export class RecordingStore {
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO recordings (computer_id, org, kind, status, started_at)
         VALUES (@computer_id, @org, @kind, @status, @started_at)`,
      ),
      get: db.prepare('SELECT * FROM recordings WHERE computer_id = ? AND org = ?'),
      list: db.prepare(
        `SELECT * FROM recordings WHERE org = ? AND status IN ('recording', 'complete')
         ORDER BY started_at DESC LIMIT ?`,
      ),
      finish: db.prepare(
        `UPDATE recordings SET status = 'complete', ended_at = ?, end_reason = ?, size_bytes = ?
         WHERE computer_id = ? AND status = 'recording'`,
      ),
      setSize: db.prepare('UPDATE recordings SET size_bytes = ? WHERE computer_id = ?'),
      drop: db.prepare(
        `UPDATE recordings SET status = 'dropped', size_bytes = 0, dropped_reason = ?
         WHERE computer_id = ?`,
      ),
      remove: db.prepare('DELETE FROM recordings WHERE computer_id = ?'),
      unfinished: db.prepare(`SELECT * FROM recordings WHERE status = 'recording'`),
      ended: db.prepare(
        `SELECT * FROM recordings WHERE status IN ('complete', 'none') ORDER BY ended_at, started_at`,
      ),
      forget: db.prepare(`DELETE FROM recordings WHERE status = 'dropped' AND started_at < ?`),
      addTask: db.prepare(
        'INSERT OR IGNORE INTO recording_tasks (computer_id, task_id) VALUES (?, ?)',
      ),
      tasks: db.prepare('SELECT task_id FROM recording_tasks WHERE computer_id = ? ORDER BY rowid'),
      ofTask: db.prepare('SELECT computer_id FROM recording_tasks WHERE task_id = ?'),
      forgetTasks: db.prepare(
        'DELETE FROM recording_tasks WHERE computer_id NOT IN (SELECT computer_id FROM recordings)',
      ),
    };
  }

  insert(row: Pick<RecordingRow, 'computer_id' | 'org' | 'kind' | 'status' | 'started_at'>): void {
    this.statements.insert.run(row);
  }

  get(org: string, computerId: string): RecordingRow | undefined {
    return this.statements.get.get(computerId, org) as RecordingRow | undefined;
  }

  list(org: string, limit: number): RecordingRow[] {
    return this.statements.list.all(org, limit) as RecordingRow[];
  }

  finish(computerId: string, endedAt: number, reason: string, sizeBytes: number): void {
    this.statements.finish.run(endedAt, reason, sizeBytes, computerId);
  }

  setSize(computerId: string, sizeBytes: number): void {
    this.statements.setSize.run(sizeBytes, computerId);
  }

  /** Marks a recording's files gone, and why (a later GET answers it). */
  drop(computerId: string, reason: string): void {
    this.statements.drop.run(reason, computerId);
  }

  remove(computerId: string): void {
    this.statements.remove.run(computerId);
  }

  /** Recordings that were running when Benchtop stopped without ending them. */
  unfinished(): RecordingRow[] {
    return this.statements.unfinished.all() as RecordingRow[];
  }

  /** Ended recordings (and rows of computers recorded with nothing), oldest end first. */
  ended(): RecordingRow[] {
    return this.statements.ended.all() as RecordingRow[];
  }

  /** Forgets dropped rows started before `before` (epoch ms), and task links of forgotten rows. */
  forgetDropped(before: number): void {
    this.db.transaction(() => {
      this.statements.forget.run(before);
      this.statements.forgetTasks.run();
    })();
  }

  addTask(computerId: string, taskId: string): void {
    this.statements.addTask.run(computerId, taskId);
  }

  tasks(computerId: string): string[] {
    return (this.statements.tasks.all(computerId) as Array<{ task_id: string }>).map(
      (row) => row.task_id,
    );
  }

  computerOfTask(taskId: string): string | undefined {
    return (this.statements.ofTask.get(taskId) as { computer_id: string } | undefined)?.computer_id;
  }
}
