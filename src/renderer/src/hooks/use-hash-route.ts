import { useEffect, useState } from 'react';

export type Route =
  | { screen: 'sessions' }
  | { screen: 'attention' }
  | { screen: 'computer'; id: string }
  | { screen: 'tasks'; id?: string }
  | { screen: 'recordings'; id?: string }
  | { screen: 'usage' }
  | { screen: 'settings' };

export function parseRoute(hash: string): Route {
  const [screen, id] = hash.replace(/^#\/?/, '').split('/');
  if (screen === 'computers' && id) return { screen: 'computer', id: decodeURIComponent(id) };
  if (screen === 'tasks') return { screen: 'tasks', id: id ? decodeURIComponent(id) : undefined };
  if (screen === 'recordings') {
    return { screen: 'recordings', id: id ? decodeURIComponent(id) : undefined };
  }
  if (screen === 'settings') return { screen: 'settings' };
  if (screen === 'usage') return { screen: 'usage' };
  if (screen === 'attention') return { screen: 'attention' };
  return { screen: 'sessions' };
}

export const href = {
  sessions: '#/sessions',
  attention: '#/attention',
  computer: (id: string) => `#/computers/${encodeURIComponent(id)}`,
  tasks: '#/tasks',
  task: (id: string) => `#/tasks/${encodeURIComponent(id)}`,
  recordings: '#/recordings',
  recording: (computerId: string) => `#/recordings/${encodeURIComponent(computerId)}`,
  usage: '#/usage',
  settings: '#/settings',
};

/** Screens are hash routes: the same build works at /ui/ and in the Electron window. */
export function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
