import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/client.js';
import { AsyncButton } from '../components/async-button.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { listTabs, type Tab } from '../sessions/tabs.js';

type Props = {
  computerId: string;
  /** Changes whenever the computer reports a tab or navigation event. */
  version: number;
  beforeAction: () => Promise<void>;
};

/** A browser computer's tabs: switch, close, open, and an address bar for the main tab. */
export function TabStrip({ computerId, version, beforeAction }: Props) {
  const api = useApi();
  const [tabs, setTabs] = useState<Tab[]>();
  const [error, setError] = useState<string>();
  // Reloads overlap (a navigation event, then the end of the navigate that caused it): only the
  // newest one's answer is shown, so an older listing that arrives late, taken before the page
  // had its title, cannot overwrite a newer one.
  const newest = useRef(0);
  const reload = useCallback(async () => {
    const call = ++newest.current;
    try {
      const listed = await listTabs(api, computerId);
      if (call === newest.current) setTabs(listed);
    } catch (failure) {
      if (call === newest.current) setError(errorText(failure));
    }
  }, [api, computerId]);
  useEffect(() => void reload(), [reload, version]);

  const tabAction = (run: () => Promise<unknown>) => async () => {
    await beforeAction();
    await run();
    await reload();
  };
  const main = tabs?.find((tab) => tab.is_main);

  return (
    <div className="tabs-bar">
      <div className="tab-strip" role="group" aria-label="Tabs">
        {tabs === undefined && <Spinner label="loading tabs" />}
        {tabs?.map((tab) => (
          <div key={tab.tab_id} className={`tab${tab.is_main ? ' tab-main' : ''}`}>
            <AsyncButton
              className="tab-title"
              aria-label={`Switch to tab ${tab.title || tab.url}`}
              title={tab.url}
              onClick={tabAction(() =>
                api.post(`/computers/${computerId}/tabs/${tab.tab_id}/switch`),
              )}
              onError={setError}
            >
              {tab.title || tab.url || 'New tab'}
            </AsyncButton>
            <AsyncButton
              className="tab-close"
              aria-label={`Close tab ${tab.title || tab.url}`}
              disabled={tabs.length === 1}
              onClick={tabAction(() => api.delete(`/computers/${computerId}/tabs/${tab.tab_id}`))}
              onError={setError}
            >
              ×
            </AsyncButton>
          </div>
        ))}
        <AsyncButton
          className="tab-new"
          aria-label="Open a new tab"
          onClick={tabAction(() => api.post(`/computers/${computerId}/tabs`, {}))}
          onError={setError}
        >
          +
        </AsyncButton>
      </div>
      <AddressBar
        url={main?.url ?? ''}
        onGo={async (url) => {
          await beforeAction();
          await api.act(computerId, 'navigate', { url });
          await reload();
        }}
      />
      <ErrorText message={error} />
    </div>
  );
}

function AddressBar({ url, onGo }: { url: string; onGo: (url: string) => Promise<void> }) {
  const [value, setValue] = useState(url);
  const { busy, error, run } = useApiAction();
  const input = useRef<HTMLInputElement>(null);
  // The tab navigated: show where it is now, unless the person is typing an address.
  useEffect(() => {
    if (document.activeElement !== input.current) setValue(url);
  }, [url]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    return run(() => onGo(value.trim()));
  };
  return (
    <form className="address" onSubmit={(event) => void submit(event)}>
      <label>
        <span className="visually-hidden">Address</span>
        <input
          ref={input}
          type="text"
          value={value}
          placeholder="https://…"
          spellCheck={false}
          onChange={(event) => setValue(event.target.value)}
        />
      </label>
      <button type="submit" disabled={busy || !value.trim()}>
        Go {busy && <Spinner label="loading the page" />}
      </button>
      <ErrorText message={error} />
    </form>
  );
}
