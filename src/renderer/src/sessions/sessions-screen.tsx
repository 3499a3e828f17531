import { useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import {
  backendsQuery,
  computersQuery,
  LIVE_STATUSES,
  queryKeys,
  tabsQuery,
  taskListQuery,
} from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { drivingTasks } from '../tasks/live-tasks.js';
import { BackendsLine, showsBackends } from './backends-line.js';
import { ComputerTable } from './computer-table.js';
import { CreateComputerForm } from './create-computer-form.js';

export function SessionsScreen() {
  const api = useApi();
  const computers = useQuery(computersQuery(api));
  // Only the live tasks: the ones that can be driving a computer.
  const drivers = useQuery({
    ...taskListQuery(api, { status: LIVE_STATUSES }),
    select: drivingTasks,
  });
  const backends = useQuery(backendsQuery(api));
  const remote = showsBackends(backends.data);
  // Counted for the list as it is now, not as the cache last had it: a computer that ended since
  // (the one just ended from its own page) has no tabs to list, only a 404.
  const tabs = useTabCounts(computers.isFetchedAfterMount ? computers.data : undefined);
  const [actionError, setActionError] = useState<string>();

  return (
    <section aria-labelledby="sessions-title">
      <header className="screen-head">
        <h1 id="sessions-title">Sessions</h1>
      </header>
      <CreateComputerForm />
      <h2>Running computers</h2>
      {remote && <BackendsLine backends={backends.data!} />}
      <ErrorText message={firstError(computers.error, drivers.error, actionError)} />
      {computers.data === undefined ? (
        <p>
          <Spinner label="loading computers" /> Loading…
        </p>
      ) : computers.data.length === 0 ? (
        <p className="muted">No computer is running. Create one above or start a task.</p>
      ) : (
        <ComputerTable
          computers={computers.data}
          showBackend={remote}
          drivers={drivers.data ?? NO_DRIVERS}
          tabCounts={tabs.counts}
          onRecountTabs={tabs.recount}
          onError={setActionError}
        />
      )}
    </section>
  );
}

const NO_DRIVERS: ReadonlyMap<string, Task> = new Map();

/**
 * Tab counts of browser computers. Listing tabs counts as activity on the computer, so they are
 * read when a computer shows up on this screen and again only when the person asks; polling them
 * would keep every computer alive forever.
 */
function useTabCounts(computers: Computer[] | undefined) {
  const api = useApi();
  const queryClient = useQueryClient();
  const browsers = (computers ?? []).filter((computer) => computer.kind === 'browser');
  const counts = useQueries({
    queries: browsers.map((computer) => ({
      ...tabsQuery(api, computer.id),
      staleTime: Infinity,
      refetchOnMount: 'always' as const,
    })),
    combine: (results) =>
      Object.fromEntries(
        results.map((result, index): [string, number | string] => [
          browsers[index]!.id,
          result.isError ? '?' : (result.data?.length ?? '…'),
        ]),
      ),
  });
  const recount = async () => {
    await Promise.all(
      browsers.map((computer) =>
        queryClient.refetchQueries({ queryKey: queryKeys.tabs(computer.id), exact: true }),
      ),
    );
  };
  return { counts, recount };
}
