import type { Db } from '../store/database.js';

/** The failed tasks each organization dismissed from what waits for a person. */
export class AttentionDismissals {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      add: db.prepare(
        'INSERT OR IGNORE INTO attention_dismissed (org, task_id, at) VALUES (?, ?, ?)',
      ),
      list: db.prepare('SELECT task_id FROM attention_dismissed WHERE org = ?'),
      forget: db.prepare('DELETE FROM attention_dismissed WHERE at < ?'),
    };
  }

  add(org: string, taskId: string, at: string): void {
    this.statements.add.run(org, taskId, at);
  }

  of(org: string): Set<string> {
    const rows = this.statements.list.all(org) as Array<{ task_id: string }>;
    return new Set(rows.map((row) => row.task_id));
  }

  /** Forgets dismissals from before `before`: their tasks have left the queue anyway. */
  forget(before: string): void {
    this.statements.forget.run(before);
  }
}
