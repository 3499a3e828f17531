import { MutationCache, QueryClient, type QueryKey } from '@tanstack/react-query';

declare module '@tanstack/react-query' {
  interface Register {
    /** What a change makes stale: these queries are fetched again once it settles. */
    mutationMeta: { invalidates?: readonly QueryKey[] };
  }
}

/**
 * The window's cache of API answers. A mutation names what it changes in `meta.invalidates`;
 * those queries are fetched again once it settles (also after a failure, which often means what
 * the window shows is out of date), and the mutation resolves only when they are, so a button
 * stays busy until the screen shows the change.
 */
export function createQueryClient(): QueryClient {
  const client: QueryClient = new QueryClient({
    mutationCache: new MutationCache({
      onSettled: async (_data, _error, _variables, _context, mutation) => {
        const keys = mutation.meta?.invalidates ?? [];
        await Promise.all(keys.map((queryKey) => client.invalidateQueries({ queryKey })));
      },
    }),
    defaultOptions: {
      // Polled queries try again at their next interval; the last good answer stays shown.
      queries: { retry: false },
      mutations: { retry: false },
    },
  });
  return client;
}
