import { describe, expect, it } from 'vitest';
import type { UsageRow } from '../../src/shared/usage.js';
import { localDay, totalsBy } from '../../src/renderer/src/usage/usage-totals.js';

const row = (task_id: string | null, cost_usd: number | null, at: string): UsageRow => ({
  id: `use_${at}`,
  response_id: 'resp_1',
  task_id,
  provider: 'openai-compatible',
  model: 'vlm',
  input_tokens: 100,
  output_tokens: 10,
  cached_tokens: 40,
  cost_usd,
  latency_ms: 5,
  images: 1,
  error: null,
  at,
});

describe('usage totals of the window', () => {
  it('sums per group in first-seen order, keeping unpriced calls apart from the cost', () => {
    const rows = [
      row('task_a', 0.5, '2026-11-20T10:00:00.000Z'),
      row(null, null, '2026-11-20T11:00:00.000Z'),
      row('task_b', null, '2026-11-21T10:00:00.000Z'),
      row('task_a', 0.25, '2026-11-21T11:00:00.000Z'),
    ];
    expect(totalsBy(rows, (r) => r.task_id)).toEqual([
      {
        key: 'task_a',
        calls: 2,
        input_tokens: 200,
        output_tokens: 20,
        cached_tokens: 80,
        cost_usd: 0.75,
        unpriced: 0,
      },
      {
        key: 'task_b',
        calls: 1,
        input_tokens: 100,
        output_tokens: 10,
        cached_tokens: 40,
        cost_usd: null,
        unpriced: 1,
      },
    ]);
    const days = totalsBy(rows, (r) => r.at.slice(0, 10));
    expect(days.map((day) => [day.key, day.calls, day.cost_usd, day.unpriced])).toEqual([
      ['2026-11-20', 2, 0.5, 1],
      ['2026-11-21', 2, 0.25, 1],
    ]);
  });

  it('names the local calendar day of a time', () => {
    const at = new Date(2026, 10, 26, 23, 59);
    expect(localDay(at.toISOString())).toBe('2026-11-26');
  });
});
