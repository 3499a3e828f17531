import { writeFileSync } from 'node:fs';
import { percentile, round } from './stats.js';

/** One row of the table and of results.json. */
export type Row = {
  name: string;
  api_p50_ms: number | null;
  raw_p50_ms: number | null;
  ratio: number | null;
  target: string;
  /** null: reported for reference, no target. */
  pass: boolean | null;
  samples: number;
  api_p90_ms?: number | null;
  raw_p90_ms?: number | null;
  /** Rows of values, not times: MB of PSS, or % of one core; the values are api_value, raw_value. */
  unit?: 'MB' | '%';
  api_value?: number;
  raw_value?: number;
  note?: string;
};

export type Target =
  | { kind: 'absolute'; maxMs: number }
  | { kind: 'ratio'; factor: number; plusMs?: number }
  | { kind: 'reference' };

function targetText(target: Target): string {
  if (target.kind === 'absolute') return `api p50 ≤ ${target.maxMs} ms`;
  if (target.kind === 'ratio') {
    return `api p50 ≤ raw p50 × ${target.factor}${target.plusMs ? ` + ${target.plusMs} ms` : ''}`;
  }
  return 'reference only';
}

export function verdict(pass: boolean | null, prefix = ''): string {
  return pass === null ? '' : `${prefix}${pass ? 'PASS' : 'FAIL'}`;
}

/** A line on stderr while the bench runs. */
export function progress(line: string): void {
  console.error(`  ${line}`);
}

/** The rows of a run, in the order the cases add them. */
export class Report {
  readonly rows: Row[] = [];

  /** A timing row: p50/p90 of each side's samples, judged against the target. */
  timing(
    name: string,
    samples: { api?: number[]; raw?: number[] },
    target: Target,
    note?: string,
  ): void {
    const { api, raw } = samples;
    const apiP50 = api ? percentile(api, 0.5) : null;
    const rawP50 = raw ? percentile(raw, 0.5) : null;
    let pass: boolean | null = null;
    if (target.kind === 'absolute' && apiP50 !== null) pass = apiP50 <= target.maxMs;
    if (target.kind === 'ratio' && apiP50 !== null && rawP50 !== null) {
      pass = apiP50 <= rawP50 * target.factor + (target.plusMs ?? 0);
    }
    const row: Row = {
      name,
      api_p50_ms: apiP50 === null ? null : round(apiP50),
      raw_p50_ms: rawP50 === null ? null : round(rawP50),
      ratio: apiP50 !== null && rawP50 ? round(apiP50 / rawP50) : null,
      target: targetText(target),
      pass,
      samples: Math.max(api?.length ?? 0, raw?.length ?? 0),
      api_p90_ms: api ? round(percentile(api, 0.9)) : null,
      raw_p90_ms: raw ? round(percentile(raw, 0.9)) : null,
      ...(note && { note }),
    };
    this.rows.push(row);
    progress(
      `${name}: api ${row.api_p50_ms ?? '-'} ms, raw ${row.raw_p50_ms ?? '-'} ms${verdict(row.pass, ' ')}`,
    );
  }

  /** A row measured otherwise (frames per second, CPU ticks, MB), written out whole. */
  add(row: Row): void {
    this.rows.push(row);
  }

  get failed(): string[] {
    return this.rows.filter((row) => row.pass === false).map((row) => row.name);
  }

  printTable(): void {
    const header = [
      'benchmark',
      'api p50',
      'api p90',
      'raw p50',
      'raw p90',
      'ratio',
      'target',
      'n',
    ];
    const ms = (value: number | null | undefined) =>
      value === null || value === undefined ? '-' : `${value.toFixed(2)} ms`;
    const valueOf = (value: number | undefined, unit: string) =>
      value === undefined ? '-' : `${value.toFixed(1)} ${unit}`;
    const lines = this.rows.map((row) => {
      const { unit } = row;
      return [
        row.name,
        unit ? valueOf(row.api_value, unit) : ms(row.api_p50_ms),
        unit ? '' : ms(row.api_p90_ms),
        unit ? valueOf(row.raw_value, unit) : ms(row.raw_p50_ms),
        unit ? '' : ms(row.raw_p90_ms),
        row.ratio === null ? '-' : row.ratio.toFixed(2),
        row.target,
        String(row.samples),
        row.pass === null ? 'info' : verdict(row.pass),
      ];
    });
    const widths = header.map((title, column) =>
      Math.max(title.length, ...lines.map((line) => line[column]!.length)),
    );
    const leftAligned = new Set([0, 6, 8]);
    const render = (cells: string[]) =>
      cells
        .map((cell, column) =>
          leftAligned.has(column)
            ? cell.padEnd(widths[column] ?? 0)
            : cell.padStart(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd();
    console.log(render(header));
    console.log(render(widths.map((width) => '-'.repeat(width))));
    for (const line of lines) console.log(render(line));
  }

  /** results.json: the run's circumstances, then every row. */
  writeResults(path: string, run: Record<string, unknown>): void {
    const results = { ...run, all_pass: this.failed.length === 0, results: this.rows };
    writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  }
}
