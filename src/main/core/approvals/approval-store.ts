import type { Approval, ApprovalListQuery } from '../../../shared/approvals.js';
import type { Db } from '../store/database.js';

/** Approvals per organization in SQLite: the held action, what was seen, the decision. */
export class ApprovalStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO approvals (id, org, computer_id, task_id, status, created_at, body)
         VALUES (@id, @org, @computer_id, @task_id, @status, @created_at, @body)`,
      ),
      update: db.prepare('UPDATE approvals SET status = ?, body = ? WHERE id = ?'),
      get: db.prepare('SELECT body FROM approvals WHERE id = ? AND org = ?'),
      list: db.prepare(
        `SELECT body FROM approvals WHERE org = @org
           AND (@status IS NULL OR status = @status)
           AND (@computer IS NULL OR computer_id = @computer)
           AND (@task IS NULL OR task_id = @task)
         ORDER BY created_at DESC, rowid DESC LIMIT @limit`,
      ),
      pending: db.prepare(
        `SELECT org, body FROM approvals WHERE status = 'pending' ORDER BY created_at, rowid`,
      ),
      forget: db.prepare(`DELETE FROM approvals WHERE status != 'pending' AND created_at < ?`),
    };
  }

  insert(org: string, approval: Approval): void {
    this.statements.insert.run({ ...approval, org, body: JSON.stringify(approval) });
  }

  update(approval: Approval): void {
    this.statements.update.run(approval.status, JSON.stringify(approval), approval.id);
  }

  get(org: string, id: string): Approval | undefined {
    const row = this.statements.get.get(id, org) as { body: string } | undefined;
    return row && read(row.body);
  }

  /** Newest first. */
  list(org: string, query: Partial<ApprovalListQuery> = {}): Approval[] {
    const rows = this.statements.list.all({
      org,
      status: query.status ?? null,
      computer: query.computer_id ?? null,
      task: query.task_id ?? null,
      limit: query.limit ?? -1,
    }) as Array<{ body: string }>;
    return rows.map((row) => read(row.body));
  }

  /** Every organization's pending approvals, oldest first. */
  pending(): Array<{ org: string; approval: Approval }> {
    return (this.statements.pending.all() as Array<{ org: string; body: string }>).map((row) => ({
      org: row.org,
      approval: read(row.body),
    }));
  }

  /** Drops decided approvals created before `before` (ISO); the retention sweep calls it. */
  forget(before: string): number {
    return this.statements.forget.run(before).changes;
  }
}

/** A stored approval; one stored before approvals named their requester names none. */
function read(body: string): Approval {
  const approval = JSON.parse(body) as Approval;
  approval.requested_by ??= null;
  return approval;
}
