import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { BenchtopError } from '../errors.js';
import type { Db } from './database.js';

export type StorageLimits = {
  stored_bytes_per_org: number;
  max_input_bytes: number;
  retention_days: number;
};

const DAY_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** Rows deleted per transaction, so requests are served between batches of a long sweep. */
const BATCH = 500;

/**
 * What each organization may keep in the database: a cap on what one request stores, a quota
 * on everything it stores (responses, tasks and their events, counted by the database's own
 * triggers), and a retention after which responses and finished tasks of every organization
 * are deleted, at start and every hour. Without these one key could fill the disk, and a full
 * disk stops every organization's writes.
 */
export class OrgStorage {
  private readonly statements;
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly limits: () => StorageLimits,
  ) {
    this.statements = {
      used: db.prepare('SELECT bytes FROM org_usage WHERE org = ?'),
      oldResponses: db.prepare(
        `DELETE FROM responses WHERE id IN (
           SELECT id FROM responses WHERE created_at < ? AND status != 'in_progress'
           ORDER BY created_at LIMIT ${BATCH})`,
      ),
      oldTasks: db.prepare(
        `SELECT id FROM tasks WHERE created_at < ? AND status NOT IN ('running', 'paused')
         ORDER BY created_at LIMIT ${BATCH}`,
      ),
      // Events first: their trigger finds the organization through the task.
      taskEvents: db.prepare('DELETE FROM task_events WHERE task_id = ?'),
      task: db.prepare('DELETE FROM tasks WHERE id = ?'),
    };
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  /** Bytes the organization stores now. */
  used(org: string): number {
    return (this.statements.used.get(org) as { bytes: number } | undefined)?.bytes ?? 0;
  }

  /**
   * Refuses, before anything is written, a row of `bytes` that one request may not store or
   * that would take the organization over its quota. `param` is the request field the size
   * mostly comes from.
   */
  admit(org: string, bytes: number, what: string, param?: string): void {
    const { stored_bytes_per_org: quota, max_input_bytes: max } = this.limits();
    if (bytes > max) {
      throw new BenchtopError(
        'payload_too_large',
        `this ${what} would store ${size(bytes)}, more than limits.max_input_bytes (${size(max)}) allows for one request; send images as URLs rather than data: URLs, or have the machine's owner raise limits.max_input_bytes`,
        { path: param },
      );
    }
    const used = this.used(org);
    if (used + bytes > quota) {
      throw new BenchtopError(
        'quota_exceeded',
        `organization "${org}" stores ${size(used)} of responses and tasks, and this ${what} (${size(bytes)}) would take it over limits.stored_bytes_per_org (${size(quota)}); delete responses it no longer needs with DELETE /v1/responses/{id}, or have the machine's owner raise limits.stored_bytes_per_org or lower limits.retention_days`,
        { path: param },
      );
    }
  }

  /**
   * Refuses a request of an organization already at its quota before any work is done for it
   * (images fetched, earlier turns read); admit() still checks the row when it is stored.
   */
  checkRoom(org: string): void {
    const { stored_bytes_per_org: quota } = this.limits();
    const used = this.used(org);
    if (used >= quota) {
      throw new BenchtopError(
        'quota_exceeded',
        `organization "${org}" stores ${size(used)} of responses and tasks, as much as limits.stored_bytes_per_org (${size(quota)}) allows or more; delete responses it no longer needs with DELETE /v1/responses/{id}, or have the machine's owner raise limits.stored_bytes_per_org or lower limits.retention_days`,
      );
    }
  }

  /**
   * Deletes responses and finished tasks older than limits.retention_days, oldest first. A
   * sweep the disk refuses is tried again at the next one; one already running is joined.
   */
  sweep(): Promise<void> {
    this.sweeping ??= this.deleteExpired()
      .catch(() => {})
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async deleteExpired(): Promise<void> {
    const cutoff = new Date(Date.now() - this.limits().retention_days * DAY_MS).toISOString();
    const deleteTasks = this.db.transaction((ids: string[]) => {
      for (const id of ids) {
        this.statements.taskEvents.run(id);
        this.statements.task.run(id);
      }
    });
    for (;;) {
      if (!this.db.open) return;
      const responses = this.statements.oldResponses.run(cutoff).changes;
      const tasks = (this.statements.oldTasks.all(cutoff) as Array<{ id: string }>).map(
        (row) => row.id,
      );
      deleteTasks(tasks);
      if (responses < BATCH && tasks.length < BATCH) return;
      await yieldToRequests();
    }
  }
}

/** Bytes as a person reads them: 1.5 MiB. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toFixed(1))} ${units[unit]}`;
}
