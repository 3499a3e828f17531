import { createContext, useContext } from 'react';
import type { ApiClient } from '../../../shared/client/api-client.js';
import type { Connection } from './connection.js';

/** How the window reaches Benchtop: the typed client with the window's key, and where it points. */
export type WindowApi = { client: ApiClient; connection: Connection };

export const ApiContext = createContext<WindowApi | undefined>(undefined);

function useWindowApi(): WindowApi {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside <ApiContext.Provider>');
  return api;
}

export function useApi(): ApiClient {
  return useWindowApi().client;
}

export function useConnection(): Connection {
  return useWindowApi().connection;
}
