import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { usePolling } from '../hooks/use-polling.js';
import { drivingTasks } from '../tasks/live-tasks.js';
import { ComputerTable } from './computer-table.js';
import { CreateComputerForm } from './create-computer-form.js';
import { countTabs } from './tabs.js';

export function SessionsScreen() {
  const api = useApi();
  const computers = usePolling(() => api.get<Computer[]>('/computers'), 2000);
  const tasks = usePolling(() => api.get<Task[]>('/agent/tasks'), 2000);
  const drivers = useMemo(() => drivingTasks(tasks.data ?? []), [tasks.data]);
  const tabs = useTabCounts(computers.data);
  const [actionError, setActionError] = useState<string>();

  return (
    <section aria-labelledby="sessions-title">
      <header className="screen-head">
        <h1 id="sessions-title">Sessions</h1>
      </header>
      <CreateComputerForm onCreated={computers.reload} />
      <h2>Running computers</h2>
      <ErrorText message={computers.error ?? tasks.error ?? actionError} />
      {computers.data === undefined ? (
        <p>
          <Spinner label="loading computers" /> Loading…
        </p>
      ) : computers.data.length === 0 ? (
        <p className="muted">No computer is running. Create one above or start a task.</p>
      ) : (
        <ComputerTable
          computers={computers.data}
          drivers={drivers}
          tabCounts={tabs.counts}
          onRecountTabs={tabs.recount}
          onChanged={computers.reload}
          onError={setActionError}
        />
      )}
    </section>
  );
}

/**
 * Tab counts of browser computers. Listing tabs counts as activity on the computer, so it is read
 * once when a computer first shows up and again only when the person asks; polling it would keep
 * every computer alive forever.
 */
function useTabCounts(computers: Computer[] | undefined) {
  const api = useApi();
  const [counts, setCounts] = useState<Record<string, number | string>>({});
  const read = useCallback(
    async (id: string) => {
      const count = await countTabs(api, id).catch(() => '?');
      setCounts((previous) => ({ ...previous, [id]: count }));
    },
    [api],
  );
  useEffect(() => {
    for (const computer of computers ?? []) {
      if (computer.kind === 'browser' && !(computer.id in counts)) {
        setCounts((previous) => ({ ...previous, [computer.id]: '…' }));
        void read(computer.id);
      }
    }
  }, [computers, counts, read]);
  const recount = useCallback(async () => {
    const browsers = (computers ?? []).filter((computer) => computer.kind === 'browser');
    await Promise.all(browsers.map((computer) => read(computer.id)));
  }, [computers, read]);
  return { counts, recount };
}
