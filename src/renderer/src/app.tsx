import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { ApiContext, useApi } from './api/api-context.js';
import {
  forgetKey,
  inDesktopApp,
  linkHasKey,
  rememberKey,
  resolveConnection,
  type Connection,
} from './api/connection.js';
import { attentionQuery } from './api/queries.js';
import { createWindowClient } from './api/window-client.js';
import { AttentionScreen } from './attention/attention-screen.js';
import { useAttentionNotifications } from './attention/use-attention-notifications.js';
import { href, useHashRoute, type Route } from './hooks/use-hash-route.js';
import { LiveScreen } from './live/live-screen.js';
import { RecordingsScreen } from './recordings/recordings-screen.js';
import { SessionsScreen } from './sessions/sessions-screen.js';
import { SettingsScreen } from './settings/settings-screen.js';
import { TasksScreen } from './tasks/tasks-screen.js';
import { UsageScreen } from './usage/usage-screen.js';

export function App({ initial }: { initial: Connection | undefined }) {
  const [connection, setConnection] = useState(initial);
  /** Set when the server refused the page's key: the prompt says why it is asked again. */
  const [refused, setRefused] = useState(false);
  const queryClient = useQueryClient();
  const api = useMemo(() => {
    if (!connection) return undefined;
    // A link's key dies with a restart or a revocation: stop asking with it (each refusal
    // counts against the address) and ask for another. The desktop app's key is its own.
    const onKeyRejected = inDesktopApp()
      ? undefined
      : () => {
          forgetKey(connection.apiKey);
          setConnection((current) => (current === connection ? undefined : current));
          setRefused(true);
          queryClient.clear();
        };
    return { client: createWindowClient(connection, onKeyRejected), connection };
  }, [connection, queryClient]);
  // A new link opened in this page (the same page, so no reload) brings its key.
  useEffect(() => {
    const onHash = () => {
      if (!linkHasKey()) return;
      queryClient.clear();
      setRefused(false);
      setConnection(resolveConnection());
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [queryClient]);
  const route = useHashRoute();
  if (!api) {
    return (
      <KeyPrompt
        refused={refused}
        onKey={(key) => {
          setRefused(false);
          setConnection(rememberKey(key));
        }}
      />
    );
  }
  const signOut = () => {
    forgetKey();
    setConnection(undefined);
    // What one key was shown is not for the next one.
    queryClient.clear();
  };
  return (
    <ApiContext.Provider value={api}>
      <div className="layout">
        <Navigation route={route} baseUrl={api.connection.baseUrl} onSignOut={signOut} />
        <main className="content">
          <Screen route={route} />
        </main>
      </div>
    </ApiContext.Provider>
  );
}

function Screen({ route }: { route: Route }) {
  switch (route.screen) {
    case 'computer':
      return <LiveScreen key={route.id} computerId={route.id} />;
    case 'tasks':
      return <TasksScreen taskId={route.id} />;
    case 'recordings':
      return <RecordingsScreen computerId={route.id} />;
    case 'settings':
      return <SettingsScreen />;
    case 'usage':
      return <UsageScreen />;
    case 'attention':
      return <AttentionScreen />;
    default:
      return <SessionsScreen />;
  }
}

function Navigation(props: { route: Route; baseUrl: string; onSignOut: () => void }) {
  const current = props.route.screen === 'computer' ? 'sessions' : props.route.screen;
  const waiting = useQuery(attentionQuery(useApi())).data?.length ?? 0;
  useAttentionNotifications();
  const link = (screen: string, target: string, label: string, count = 0) => (
    <a href={target} aria-current={current === screen ? 'page' : undefined}>
      {label}
      {count > 0 && (
        <span className="nav-count">
          {count}
          <span className="visually-hidden"> waiting</span>
        </span>
      )}
    </a>
  );
  return (
    <nav className="sidebar" aria-label="Screens">
      <div className="brand">Benchtop</div>
      {link('attention', href.attention, 'Needs you', waiting)}
      {link('sessions', href.sessions, 'Sessions')}
      {link('tasks', href.tasks, 'Tasks')}
      {link('recordings', href.recordings, 'Recordings')}
      {link('usage', href.usage, 'Usage')}
      {link('settings', href.settings, 'Settings')}
      <div className="sidebar-foot">
        <span title="the server this window talks to">{props.baseUrl}</span>
        {!inDesktopApp() && (
          <button type="button" className="link" onClick={props.onSignOut}>
            Forget key
          </button>
        )}
      </div>
    </nav>
  );
}

/** Opened without a key (the /ui/ address typed by hand), or its key refused: ask for one. */
function KeyPrompt({ onKey, refused }: { onKey: (key: string) => void; refused: boolean }) {
  const [key, setKey] = useState('');
  return (
    <main className="key-prompt">
      <h1>Benchtop</h1>
      {refused && (
        <p className="error" role="alert">
          Benchtop no longer takes the key this page had: it was revoked, or Benchtop restarted (the
          link it prints has a new key at every start).
        </p>
      )}
      <p>
        This page needs a key. Open the link that <code>benchtop serve</code> printed, or paste a
        key created with <code>benchtop keys create</code>.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
      >
        <label>
          API key
          <input
            type="password"
            value={key}
            autoComplete="off"
            onChange={(event) => setKey(event.target.value)}
          />
        </label>
        <button type="submit">Connect</button>
      </form>
    </main>
  );
}
