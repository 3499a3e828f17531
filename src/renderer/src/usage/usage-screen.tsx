import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { usageQuery } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';
import { dollars } from '../../../shared/describe-task-event.js';
import { localDay, totalsBy, type UsageTotal } from './usage-totals.js';

const DAYS = 30;
const count = (value: number) => value.toLocaleString('en-US');

/** What the model calls of the last 30 days cost, per day, model and task (GET /v1/usage). */
export function UsageScreen() {
  const api = useApi();
  // Fixed when the screen opens, so each poll asks for the same rows and shares one cache entry.
  const [since] = useState(() => new Date(Date.now() - DAYS * 86_400_000).toISOString());
  const usage = useQuery(usageQuery(api, { since }));
  const rows = usage.data?.rows;
  const days = rows ? totalsBy(rows, (row) => localDay(row.at)).reverse() : [];
  // The most used first.
  const models = rows ? totalsBy(rows, (row) => row.model).sort((a, b) => b.calls - a.calls) : [];
  const tasks = rows ? totalsBy(rows, (row) => row.task_id).reverse() : [];
  const outside = rows ? rows.filter((row) => row.task_id === null).length : 0;
  return (
    <section aria-labelledby="usage-title">
      <header className="screen-head">
        <h1 id="usage-title">Usage</h1>
        <span className="muted">
          Model calls of the last {DAYS} days, priced by models.providers.&lt;name&gt;.price.
        </span>
      </header>
      <ErrorText message={firstError(usage.error)} />
      {usage.data?.cut && (
        <p className="muted">Only the oldest {count(usage.data.rows.length)} calls are counted.</p>
      )}
      {rows === undefined ? (
        !usage.error && <Spinner label="loading usage" />
      ) : rows.length === 0 ? (
        <p className="muted">No model call in the last {DAYS} days.</p>
      ) : (
        <>
          <h2 id="usage-per-day">Per day</h2>
          <UsageTable label="Day" totals={days} labelledBy="usage-per-day" />
          <h2 id="usage-per-model">Per model</h2>
          <UsageTable label="Model" totals={models} labelledBy="usage-per-model" />
          <h2 id="usage-per-task">Per task</h2>
          {tasks.length === 0 ? (
            <p className="muted">No task called a model.</p>
          ) : (
            <UsageTable label="Task" totals={tasks} link={href.task} labelledBy="usage-per-task" />
          )}
          {outside > 0 && (
            <p className="muted">
              {count(outside)} {outside === 1 ? 'call' : 'calls'} came through the Responses API
              outside any task.
            </p>
          )}
        </>
      )}
    </section>
  );
}

type TableProps = {
  label: string;
  totals: UsageTotal[];
  link?: (key: string) => string;
  /** The id of the heading that names the table. */
  labelledBy: string;
};

function UsageTable({ label, totals, link, labelledBy }: TableProps) {
  return (
    <table className="table usage-table" aria-labelledby={labelledBy}>
      <thead>
        <tr>
          {[label, 'Calls', 'Input tokens', 'Cached', 'Output tokens', 'Cost'].map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {totals.map((total) => (
          <tr key={total.key}>
            <th scope="row">{link ? <a href={link(total.key)}>{total.key}</a> : total.key}</th>
            <td>{count(total.calls)}</td>
            <td>{count(total.input_tokens)}</td>
            <td>{count(total.cached_tokens)}</td>
            <td>{count(total.output_tokens)}</td>
            <td>
              <CostCell total={total} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The priced calls' dollars, and how many calls had no price (unknown, not free). */
export function CostCell({ total }: { total: Pick<UsageTotal, 'cost_usd' | 'unpriced'> }) {
  if (total.cost_usd === null) return <span className="muted">no price set</span>;
  return (
    <>
      {dollars(total.cost_usd)}
      {total.unpriced > 0 && <span className="muted"> + {count(total.unpriced)} unpriced</span>}
    </>
  );
}
