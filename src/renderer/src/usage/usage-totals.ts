import type { UsageRow } from '../../../shared/usage.js';

/** What a group of model calls adds up to. */
export type UsageTotal = {
  key: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  /** Dollars of the priced calls; null when none of them had a price. */
  cost_usd: number | null;
  /** Calls whose model had no price: the cost leaves them out. */
  unpriced: number;
};

/** Totals per group, in the order each group first appears (rows come oldest first). */
export function totalsBy(rows: readonly UsageRow[], keyOf: (row: UsageRow) => string | null) {
  const totals = new Map<string, UsageTotal>();
  for (const row of rows) {
    const key = keyOf(row);
    if (key === null) continue;
    let total = totals.get(key);
    if (!total) {
      total = {
        key,
        calls: 0,
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: 0,
        cost_usd: null,
        unpriced: 0,
      };
      totals.set(key, total);
    }
    total.calls += 1;
    total.input_tokens += row.input_tokens;
    total.output_tokens += row.output_tokens;
    total.cached_tokens += row.cached_tokens;
    if (row.cost_usd === null) total.unpriced += 1;
    else total.cost_usd = (total.cost_usd ?? 0) + row.cost_usd;
  }
  return [...totals.values()];
}

/** The calendar day of a call where the window runs: a person reads their own days. */
export function localDay(iso: string): string {
  const at = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}
