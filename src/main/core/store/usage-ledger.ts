import type { UsageList, UsageQuery, UsageRow } from '../../../shared/usage.js';
import { invalidRequest } from '../errors.js';
import { newId } from '../ids.js';
import type { Db } from './database.js';

/** A row to write: everything but its id. */
export type ModelCall = Omit<UsageRow, 'id'> & { org: string };

/** What a task's calls add up to, read from its rows. */
export type UsageTotals = {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  /** Dollars of the calls that have a price; calls without one add nothing. */
  cost_usd: number;
};

type Row = UsageRow & { seq: number };

/**
 * The usage ledger: one SQLite row per model call, per organization. Tasks' usage and budgets
 * are sums of these same rows, so a task's numbers and GET /v1/usage cannot disagree.
 */
export class UsageLedger {
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO model_calls (id, org, response_id, task_id, provider, model, input_tokens,
           output_tokens, cached_tokens, cost_usd, latency_ms, images, error, at)
         VALUES (@id, @org, @response_id, @task_id, @provider, @model, @input_tokens,
           @output_tokens, @cached_tokens, @cost_usd, @latency_ms, @images, @error, @at)`,
      ),
      seqOf: db.prepare<[string, string], { seq: number }>(
        'SELECT seq FROM model_calls WHERE id = ? AND org = ?',
      ),
      totals: db.prepare<[string, string], UsageTotals>(
        `SELECT ifnull(SUM(input_tokens), 0) AS input_tokens,
                ifnull(SUM(output_tokens), 0) AS output_tokens,
                ifnull(SUM(cached_tokens), 0) AS cached_tokens,
                ifnull(SUM(cost_usd), 0) AS cost_usd
           FROM model_calls WHERE org = ? AND task_id = ?`,
      ),
    };
  }

  record(call: ModelCall): UsageRow {
    const row = { id: newId('use'), ...call };
    this.statements.insert.run(row);
    const { org: _, ...answer } = row;
    return answer;
  }

  /** The organization's rows matching the query, oldest first, a page at a time. */
  list(org: string, query: UsageQuery): UsageList {
    const where = ['org = @org'];
    const params: Record<string, unknown> = { org, limit: query.limit + 1 };
    if (query.task_id !== undefined) {
      where.push('task_id = @task_id');
      params.task_id = query.task_id;
    }
    if (query.response_id !== undefined) {
      where.push('response_id = @response_id');
      params.response_id = query.response_id;
    }
    if (query.since !== undefined) {
      // Stored times are UTC with milliseconds, so text order is time order.
      where.push('at >= @since');
      params.since = new Date(query.since).toISOString();
    }
    if (query.after !== undefined) {
      const cursor = this.statements.seqOf.get(query.after, org);
      if (!cursor) {
        throw invalidRequest(
          `after "${query.after}" is not a usage row of this organization; pass the last_id of the page before`,
          'after',
        );
      }
      where.push('seq > @after');
      params.after = cursor.seq;
    }
    const rows = this.db
      .prepare<Record<string, unknown>, Row>(
        `SELECT * FROM model_calls WHERE ${where.join(' AND ')} ORDER BY seq LIMIT @limit`,
      )
      .all(params);
    const page = rows
      .slice(0, query.limit)
      .map(({ seq: _, org: __, ...row }: Row & { org?: string }) => row);
    return {
      object: 'list',
      data: page,
      has_more: rows.length > query.limit,
      last_id: page.at(-1)?.id ?? null,
    };
  }

  totals(org: string, taskId: string): UsageTotals {
    return this.statements.totals.get(org, taskId)!;
  }
}
