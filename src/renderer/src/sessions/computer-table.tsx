import { useMutation } from '@tanstack/react-query';
import { Fragment } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { queryKeys } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { age, clock, localTime, secondsUntil } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';
import { DrivingTaskRow } from './driving-task.js';

type Props = {
  computers: Computer[];
  /** A "Runs on" column: browsers may run on more than this machine. */
  showBackend: boolean;
  /** The live task driving each computer, by computer id. */
  drivers: ReadonlyMap<string, Task>;
  tabCounts: Record<string, number | string>;
  onRecountTabs: () => Promise<void>;
  onError: (message: string | undefined) => void;
};

export function ComputerTable(props: Props) {
  const { computers, showBackend, drivers, tabCounts, onRecountTabs, onError } = props;
  const now = useNow();
  const columns = showBackend ? 9 : 8;
  return (
    <table className="table">
      <thead>
        <tr>
          <th scope="col">Computer</th>
          <th scope="col">Kind</th>
          {showBackend && <th scope="col">Runs on</th>}
          <th scope="col">Status</th>
          <th scope="col">Display</th>
          <th scope="col">Age</th>
          <th scope="col">Idle ends in</th>
          <th scope="col">
            Tabs{' '}
            <AsyncButton
              className="link"
              onClick={onRecountTabs}
              onError={onError}
              title="Counting tabs counts as activity on each browser"
            >
              recount
            </AsyncButton>
          </th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {computers.map((computer) => {
          const driver = drivers.get(computer.id);
          return (
            <Fragment key={computer.id}>
              <tr data-computer-id={computer.id} className={driver && 'driven'}>
                <td>
                  <a href={href.computer(computer.id)}>{computer.id}</a>
                  {computer.persistent && <span className="badge">persistent</span>}
                </td>
                <td>{computer.kind}</td>
                {showBackend && <td>{computer.backend ?? 'this machine'}</td>}
                <td>
                  <span className={`status status-${computer.status}`}>{computer.status}</span>
                </td>
                <td>
                  {computer.display.width}×{computer.display.height}
                </td>
                <td title={localTime(computer.created_at)}>{age(computer.created_at, now)}</td>
                <td>
                  <IdleCountdown computer={computer} now={now} driven={driver !== undefined} />
                </td>
                <td>{computer.kind === 'browser' ? (tabCounts[computer.id] ?? '…') : '—'}</td>
                <td>
                  <RowActions computer={computer} onError={onError} />
                </td>
              </tr>
              {driver && <DrivingTaskRow task={driver} columns={columns} />}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}

type RowActionsProps = Pick<Props, 'onError'> & { computer: Computer };

function RowActions({ computer, onError }: RowActionsProps) {
  const api = useApi();
  const keepAlive = useMutation({
    mutationFn: () => api.call('computers.keepalive', { params: { id: computer.id } }),
    meta: { invalidates: [queryKeys.computers] },
  });
  // A persistent computer that ends saves its environment; a task on it ends with it.
  const end = useMutation({
    mutationFn: () => api.call('computers.delete', { params: { id: computer.id } }),
    meta: { invalidates: [queryKeys.computers, queryKeys.environments, queryKeys.tasks] },
  });
  return (
    <div className="row-actions">
      <a className="button secondary" href={href.computer(computer.id)}>
        Open
      </a>
      <AsyncButton
        className="secondary"
        aria-label={`Keep ${computer.id} alive`}
        onClick={() => keepAlive.mutateAsync()}
        onError={onError}
      >
        Keep alive
      </AsyncButton>
      <AsyncButton
        className="danger"
        aria-label={`End ${computer.id}`}
        onClick={() => end.mutateAsync()}
        onError={onError}
      >
        End
      </AsyncButton>
    </div>
  );
}

function IdleCountdown({
  computer,
  now,
  driven,
}: {
  computer: Computer;
  now: number;
  driven: boolean;
}) {
  const idle = secondsUntil(computer.idle_expires_at, now);
  const lifetime = secondsUntil(computer.expires_at, now);
  const title =
    lifetime === undefined ? 'no maximum lifetime' : `ends for good in ${clock(lifetime)}`;
  if (idle === undefined) return <span title={title}>never (idle timeout off)</span>;
  // A task on it (running, or paused for a person) keeps it from idling out until the task ends;
  // so does an action on it that waits for a person's approval.
  if (driven || computer.idle_held)
    return (
      <span title={title} className="no-wrap">
        {driven ? 'after its task' : 'after a person decides'}
      </span>
    );
  return (
    <span title={title} className={idle < 30 ? 'warn' : undefined}>
      {clock(idle)}
    </span>
  );
}
