import { useEffect, useState } from 'react';
import type { Computer } from '../../../shared/computers.js';
import { useApi } from '../api/api-context.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { clock, secondsUntil } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';
import { usePolling } from '../hooks/use-polling.js';
import { DriverBanner } from './driver-banner.js';
import { LiveView } from './live-view.js';
import { TabStrip } from './tab-strip.js';
import { useDriver } from './use-driver.js';

/** One computer: who drives it, its tabs and its live view. */
export function LiveScreen({ computerId }: { computerId: string }) {
  const api = useApi();
  const computer = usePolling(() => api.get<Computer>(`/computers/${computerId}`), 2000);
  const { driver, takeOver, handBack } = useDriver(computerId);
  const tabsVersion = useComputerEvents(computerId, computer.reload);
  const [error, setError] = useState<string>();
  const current = computer.data;

  return (
    <section className="live-screen" aria-labelledby="live-title">
      <header className="screen-head">
        <a href={href.sessions}>← Sessions</a>
        <h1 id="live-title">{computerId}</h1>
        {current && <ComputerFacts computer={current} />}
        {current?.status === 'running' && (
          <span className="head-actions">
            <AsyncButton
              className="secondary"
              onClick={async () => {
                await api.post(`/computers/${computerId}/keepalive`);
                await computer.reload();
              }}
              onError={setError}
            >
              Keep alive
            </AsyncButton>
            <AsyncButton
              className="danger"
              onClick={async () => {
                await api.delete(`/computers/${computerId}`);
                location.hash = href.sessions;
              }}
              onError={setError}
            >
              End
            </AsyncButton>
          </span>
        )}
      </header>
      <ErrorText message={error ?? computer.error} />
      {!current && !computer.error && <Spinner label="loading the computer" />}
      {current?.status === 'terminated' && (
        <p className="notice">This computer has ended ({current.termination_reason}).</p>
      )}
      {current?.status === 'running' && (
        <>
          <DriverBanner driver={driver} onTakeOver={takeOver} onHandBack={handBack} />
          {current.kind === 'browser' && (
            <TabStrip computerId={computerId} version={tabsVersion} beforeAction={takeOver} />
          )}
          <LiveView computer={current} beforeAction={takeOver} />
        </>
      )}
    </section>
  );
}

function ComputerFacts({ computer }: { computer: Computer }) {
  const now = useNow();
  const idle = secondsUntil(computer.idle_expires_at, now);
  return (
    <span className="facts">
      <span>{computer.kind}</span>
      <span>
        {computer.display.width}×{computer.display.height}
      </span>
      <span className={`status status-${computer.status}`}>{computer.status}</span>
      {computer.status === 'running' && idle !== undefined && (
        <span>idle ends in {clock(idle)}</span>
      )}
    </span>
  );
}

/**
 * Follows the computer's events: tab and navigation events refresh the tab strip (returned as a
 * version number), a status event reloads the computer so the screen shows it ended.
 */
function useComputerEvents(computerId: string, onStatus: () => Promise<void>): number {
  const api = useApi();
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    const onMessage = ({ data }: { data: unknown }) => {
      const type = (data as { type?: string }).type;
      if (type === 'tab' || type === 'navigation') setVersion((n) => n + 1);
      if (type === 'status') void onStatus();
    };
    api.stream(`/computers/${computerId}/events`, onMessage, controller.signal).catch(() => {
      // The stream ends with the computer; the polled computer shows why.
    });
    return () => controller.abort();
  }, [api, computerId, onStatus]);
  return version;
}
