import type { BrowserContext } from 'playwright-core';
import { rawContext, type Bench } from '../bench.js';
import { settledPss } from '../proc.js';
import { progress, verdict } from '../report.js';
import { round } from '../stats.js';

const MEMORY_EXTRA = 5;

/**
 * Two rounds of +5 API computers then +5 raw contexts, all idle on about:blank; each kind's cost is
 * the mean of its two deltas, so a one-off (a spare renderer, a late GC) weighs half.
 */
export async function benchMemory({ server, client, browser, report }: Bench): Promise<void> {
  const ids: string[] = [];
  const contexts: BrowserContext[] = [];
  const deltas = { api: [] as number[], raw: [] as number[] };
  const readings: string[] = [];
  let last = await settledPss(server);
  readings.push(`${last.mb.toFixed(0)} MB/${last.processes} procs`);
  try {
    for (const kind of ['api', 'raw', 'api', 'raw'] as const) {
      for (let i = 0; i < MEMORY_EXTRA; i++) {
        if (kind === 'api') ids.push((await client.create()).id);
        else contexts.push((await rawContext(browser)).context);
      }
      const now = await settledPss(server);
      deltas[kind].push((now.mb - last.mb) / MEMORY_EXTRA);
      readings.push(`+${MEMORY_EXTRA} ${kind} → ${now.mb.toFixed(0)} MB/${now.processes} procs`);
      last = now;
    }
  } finally {
    for (const id of ids) await client.timed('DELETE', `/computers/${id}`);
    for (const context of contexts) await context.close();
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const api = mean(deltas.api);
  const raw = mean(deltas.raw);
  const pass = api <= 80;
  report.add({
    name: `memory per idle computer (PSS)`,
    api_p50_ms: null,
    raw_p50_ms: null,
    ratio: round(api / raw),
    target: 'api ≤ 80 MB each',
    pass,
    samples: 2 * MEMORY_EXTRA,
    unit: 'MB',
    api_value: round(api, 1),
    raw_value: round(raw, 1),
    note: `Chromium tree: ${readings.join(', ')}; per-round MB each: api ${deltas.api
      .map((d) => d.toFixed(1))
      .join(', ')}, raw ${deltas.raw.map((d) => d.toFixed(1)).join(', ')}`,
  });
  progress(`memory: api ${api.toFixed(1)} MB, raw ${raw.toFixed(1)} MB each ${verdict(pass)}`);
}
