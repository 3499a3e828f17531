import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import type { Computer } from '../../../shared/computers.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import {
  backendsQuery,
  computerQuery,
  isNotFound,
  queryKeys,
  recordingQuery,
  taskListQuery,
} from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { clock, endedBecause, secondsUntil } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';
import { showsBackends } from '../sessions/backends-line.js';
import { ComputerDownloads } from './computer-downloads.js';
import { ClientHeldActions, DriverBanner } from './driver-banner.js';
import { LiveView } from './live-view.js';
import { TabStrip } from './tab-strip.js';
import { useDriver } from './use-driver.js';

/** One computer: who drives it, its tabs and its live view. */
export function LiveScreen({ computerId }: { computerId: string }) {
  const api = useApi();
  const computer = useQuery(computerQuery(api, computerId));
  const { driver, takeOver, handBack, release } = useDriver(computerId);
  useComputerEvents(computerId);
  const [error, setError] = useState<string>();
  const keepAlive = useMutation({
    mutationFn: () => api.call('computers.keepalive', { params: { id: computerId } }),
    meta: { invalidates: [queryKeys.computers] },
  });
  // A persistent computer that ends saves its environment; a task on it ends with it.
  const end = useMutation({
    mutationFn: () => api.call('computers.delete', { params: { id: computerId } }),
    meta: { invalidates: [queryKeys.computers, queryKeys.environments, queryKeys.tasks] },
  });
  const current = computer.data;
  const gone = isNotFound(computer.error);

  return (
    <section className="live-screen" aria-labelledby="live-title">
      <header className="screen-head">
        <a href={href.sessions}>← Sessions</a>
        <h1 id="live-title">{computerId}</h1>
        {current && (
          <ComputerFacts
            computer={current}
            driven={'task' in driver && driver.task !== undefined}
          />
        )}
        {current?.status === 'running' && (
          <span className="head-actions">
            <AsyncButton
              className="secondary"
              onClick={() => keepAlive.mutateAsync()}
              onError={setError}
            >
              Keep alive
            </AsyncButton>
            <AsyncButton
              className="danger"
              onClick={async () => {
                await end.mutateAsync();
                location.hash = href.sessions;
              }}
              onError={setError}
            >
              End
            </AsyncButton>
          </span>
        )}
      </header>
      <ErrorText message={error ?? (gone ? undefined : firstError(computer.error))} />
      {!current && !computer.error && <Spinner label="loading the computer" />}
      {current?.status === 'terminated' && <EndedNotice computer={current} />}
      {gone && <GoneNotice computerId={computerId} />}
      {current?.status === 'running' && (
        <>
          <DriverBanner
            driver={driver}
            onTakeOver={takeOver}
            onHandBack={handBack}
            onRelease={release}
          />
          <ClientHeldActions computerId={computerId} />
          {current.kind === 'browser' && (
            <TabStrip computerId={computerId} beforeAction={takeOver} />
          )}
          <LiveView computer={current} beforeAction={takeOver} />
          <ComputerDownloads computer={current} onError={setError} />
        </>
      )}
    </section>
  );
}

/**
 * Why it ended, how its last task ended (a task's own computer ends with it: the person who
 * watched it work sees where it went), and a way to what it left behind (a computer may have
 * been unrecorded).
 */
function EndedNotice({ computer }: { computer: Computer }) {
  return (
    <WhatItLeft computerId={computer.id}>
      This computer has ended
      {computer.termination_reason &&
        `: ${endedBecause(computer.termination_reason, computer.ended_by)}`}
      .
    </WhatItLeft>
  );
}

/**
 * A computer Benchtop no longer holds: one is kept for an hour after it ends, and not across a
 * restart, while its recording and tasks stay (a task's page links to its computer).
 */
function GoneNotice({ computerId }: { computerId: string }) {
  return (
    <WhatItLeft computerId={computerId}>
      Benchtop holds no computer {computerId}: an ended computer is kept for an hour, and not across
      a restart.
    </WhatItLeft>
  );
}

/** `children`, then a link to the computer's recording and how its last task ended, if any. */
function WhatItLeft({ computerId, children }: { computerId: string; children: ReactNode }) {
  const api = useApi();
  const recording = useQuery({
    ...recordingQuery(api, computerId),
    refetchInterval: false,
    retry: false,
  });
  const task = useQuery({
    ...taskListQuery(api, { computer_id: computerId, limit: 1 }),
    refetchInterval: false,
  }).data?.[0];
  const outcome = task?.result ?? task?.error;
  return (
    <div className="notice">
      <p>
        {children} {recording.data && <a href={href.recording(computerId)}>See its recording</a>}
      </p>
      {task && (
        <p className="ended-task">
          Its last task <a href={href.task(task.task_id)}>{task.task_id}</a> {task.status}
          {outcome ? `: ${outcome}` : '.'}
        </p>
      )}
    </div>
  );
}

function ComputerFacts({ computer, driven }: { computer: Computer; driven: boolean }) {
  const api = useApi();
  const backends = useQuery(backendsQuery(api));
  const now = useNow();
  const idle = secondsUntil(computer.idle_expires_at, now);
  return (
    <span className="facts">
      <span>{computer.kind}</span>
      {/* Once browsers run elsewhere too (a Playwright server, a Grid), as Sessions says it. */}
      {computer.backend && showsBackends(backends.data) && (
        <span title="its browser backend (settings: Where browsers run)">
          on {computer.backend}
        </span>
      )}
      <span>
        {computer.display.width}×{computer.display.height}
      </span>
      <span className={`status status-${computer.status}`}>{computer.status}</span>
      {computer.status === 'running' && idle !== undefined && (
        // A task on it keeps it from idling out until the task ends; a pending approval too.
        <span>
          {driven
            ? 'no idle timeout while its task runs'
            : computer.idle_held
              ? 'no idle timeout while a person decides'
              : `idle ends in ${clock(idle)}`}
        </span>
      )}
    </span>
  );
}

/**
 * Follows the computer's events: tab and navigation events list the tabs again, a download lists
 * the downloads again, an approval asked or decided reads the queue again, a status event
 * reloads the computer so the screen shows it ended.
 */
function useComputerEvents(computerId: string): void {
  const api = useApi();
  const queryClient = useQueryClient();
  useEffect(() => {
    const controller = new AbortController();
    const follow = async () => {
      const events = api.events('streams.events', {
        params: { id: computerId },
        signal: controller.signal,
      });
      for await (const { data } of events) {
        if (data.type === 'tab' || data.type === 'navigation') {
          void queryClient.invalidateQueries({ queryKey: queryKeys.tabs(computerId) });
        }
        if (data.type === 'download') {
          void queryClient.invalidateQueries({ queryKey: queryKeys.downloads(computerId) });
        }
        // Held or decided: the banner asking about it, and whether the computer can idle out
        // meanwhile, show at once, not at the next poll.
        if (data.type === 'approval_required' || data.type === 'approval_decided') {
          void queryClient.invalidateQueries({ queryKey: queryKeys.attention });
          void queryClient.invalidateQueries({ queryKey: queryKeys.pendingApprovals });
          void queryClient.invalidateQueries({ queryKey: queryKeys.computer(computerId) });
        }
        if (data.type === 'status') {
          void queryClient.invalidateQueries({ queryKey: queryKeys.computers });
        }
      }
    };
    follow().catch(() => {
      // The stream ends with the computer; the polled computer shows why.
    });
    return () => controller.abort();
  }, [api, queryClient, computerId]);
}
