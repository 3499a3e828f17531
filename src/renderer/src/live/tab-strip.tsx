import { useMutation, useQuery } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { queryKeys, tabsQuery } from '../api/queries.js';
import { act } from '../api/window-client.js';
import { AsyncButton } from '../components/async-button.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';

type Props = {
  computerId: string;
  beforeAction: () => Promise<void>;
};

/**
 * A browser computer's tabs: switch, close, open, and an address bar for the main tab. The list
 * is read again after each change and on each tab or navigation event of the computer. Those
 * reads overlap (a navigation event, then the end of the navigate that caused it): a newer read
 * cancels the older one, so a listing taken before the page had its title cannot arrive late and
 * overwrite a newer one.
 */
export function TabStrip({ computerId, beforeAction }: Props) {
  const api = useApi();
  const tabs = useQuery(tabsQuery(api, computerId));
  const [error, setError] = useState<string>();
  const tabAction = useMutation({
    mutationFn: async (run: () => Promise<unknown>) => {
      await beforeAction();
      await run();
    },
    meta: { invalidates: [queryKeys.tabs(computerId)] },
  });
  const perform = (run: () => Promise<unknown>) => () => tabAction.mutateAsync(run);
  const list = tabs.data;
  const main = list?.find((tab) => tab.is_main);

  return (
    <div className="tabs-bar">
      <div className="tab-strip" role="group" aria-label="Tabs">
        {list === undefined && <Spinner label="loading tabs" />}
        {list?.map((tab) => (
          <div key={tab.tab_id} className={`tab${tab.is_main ? ' tab-main' : ''}`}>
            <AsyncButton
              className="tab-title"
              aria-label={`Switch to tab ${tabLabel(tab)}`}
              title={tab.url}
              onClick={perform(() =>
                api.call('tabs.switch', {
                  params: { id: computerId, tab_id: tab.tab_id },
                }),
              )}
              onError={setError}
            >
              {tabLabel(tab)}
            </AsyncButton>
            <AsyncButton
              className="tab-close"
              aria-label={`Close tab ${tabLabel(tab)}`}
              disabled={list.length === 1}
              onClick={perform(() =>
                api.call('tabs.close', {
                  params: { id: computerId, tab_id: tab.tab_id },
                }),
              )}
              onError={setError}
            >
              ×
            </AsyncButton>
          </div>
        ))}
        <AsyncButton
          className="tab-new"
          aria-label="Open a new tab"
          onClick={perform(() =>
            api.call('tabs.create', {
              params: { id: computerId },
              body: {},
            }),
          )}
          onError={setError}
        >
          +
        </AsyncButton>
      </div>
      <AddressBar
        url={main?.url ?? ''}
        onGo={(url) => tabAction.mutateAsync(() => act(api, computerId, 'navigate', { url }))}
      />
      <ErrorText message={error ?? firstError(tabs.error)} />
    </div>
  );
}

/** What a tab is called: its title, else its address; Chromium's error page by what it is. */
function tabLabel(tab: { title: string; url: string }): string {
  if (tab.url.startsWith('chrome-error:')) return 'Page not loaded';
  return tab.title || tab.url || 'New tab';
}

function AddressBar({ url, onGo }: { url: string; onGo: (url: string) => Promise<unknown> }) {
  const { busy, error, run } = useApiAction();
  // What the person typed and has not sent yet (null: nothing), kept when the field loses the
  // focus: a click on Go takes it away before the form is sent, and a URL arriving then would
  // replace the address.
  const [draft, setDraft] = useState<string | null>(null);
  // What the field showed when the person came into it, shown while they are in it and have typed
  // nothing: they may be about to type over it. A value written to the field then moved the caret
  // to the end, and what they typed was added to it ("about:blankhttp://…"). The field's value is
  // worked out as it is drawn, so a tab listing that arrives just as the person comes in (read
  // before, drawn after) cannot slip past this either, as it could when an effect copied the
  // tab's address into the field.
  const [entered, setEntered] = useState<string | null>(null);
  const value = draft ?? entered ?? url;
  // A click that brings the person into the field selects the whole address, as in a browser (so
  // what they type replaces it); one once they are in it places the caret; a drag selects.
  const selectOnClick = useRef(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const sent = value.trim();
    setDraft(null);
    // Sent with Enter, the field keeps the focus: where the tab goes shows all the same.
    setEntered(null);
    return run(() =>
      onGo(sent).catch((error: unknown) => {
        // As a browser keeps a mistyped address after "This site can't be reached": to mend it,
        // not the error page's chrome-error:// address.
        setDraft(sent);
        throw error;
      }),
    );
  };
  return (
    <form className="address" onSubmit={(event) => void submit(event)}>
      <label>
        <span className="visually-hidden">Address</span>
        <input
          type="text"
          value={value}
          placeholder="https://…"
          spellCheck={false}
          onChange={(event) => setDraft(event.target.value)}
          onMouseDown={(event) => {
            selectOnClick.current = document.activeElement !== event.currentTarget;
          }}
          onMouseUp={(event) => {
            const input = event.currentTarget;
            if (selectOnClick.current && input.selectionStart === input.selectionEnd) {
              input.select();
            }
            selectOnClick.current = false;
          }}
          onFocus={(event) => setEntered(event.currentTarget.value)}
          // Left unedited: where the tab is now.
          onBlur={() => setEntered(null)}
          // As in a browser, Escape gives the field back to the tab's address.
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            setDraft(null);
            setEntered(url);
          }}
        />
      </label>
      <button type="submit" disabled={busy || !value.trim()}>
        Go {busy && <Spinner label="loading the page" />}
      </button>
      <ErrorText message={error} />
    </form>
  );
}
