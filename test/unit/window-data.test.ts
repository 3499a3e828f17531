import { MutationObserver, QueryObserver, type QueryObserverResult } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  computersQuery,
  queryKeys,
  tabsQuery,
  taskListSearch,
} from '../../src/renderer/src/api/queries.js';
import { createQueryClient } from '../../src/renderer/src/api/query-client.js';
import type { ApiClient } from '../../src/shared/client/api-client.js';

/** A client whose calls answer what `answers` gives for the route, counting each call. */
function fakeApi(answers: (route: string) => unknown) {
  const call = vi.fn((route: string) => Promise.resolve(answers(route)));
  return { api: { call } as unknown as ApiClient, call };
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** Subscribes like a mounted component does and resolves with its first answer. */
function show<T>(observer: {
  subscribe(listener: (result: QueryObserverResult<T>) => void): () => void;
}): Promise<T> {
  return new Promise((resolve) => {
    stops.push(
      observer.subscribe((result) => {
        if (result.isSuccess) resolve(result.data);
      }),
    );
  });
}

describe('the window’s query cache', () => {
  it('has two components showing the computers share one request', async () => {
    const { api, call } = fakeApi(() => [{ id: 'comp_1' }]);
    const client = createQueryClient();
    const first = show(new QueryObserver(client, computersQuery(api)));
    const second = show(new QueryObserver(client, computersQuery(api)));
    expect(await Promise.all([first, second])).toEqual([[{ id: 'comp_1' }], [{ id: 'comp_1' }]]);
    expect(call).toHaveBeenCalledTimes(1);
  });

  it('fetches what a mutation changed again before the mutation resolves, and nothing else', async () => {
    let computers = 1;
    const { api, call } = fakeApi((route) =>
      route === 'computers.list'
        ? Array.from({ length: computers }, (_, n) => ({ id: `comp_${n}` }))
        : { status: 'success', result: { tabs: [] } },
    );
    const client = createQueryClient();
    const list = new QueryObserver(client, computersQuery(api));
    await show(list);
    // Listing tabs counts as activity on a computer: a change to computers must not list them.
    await show(new QueryObserver(client, tabsQuery(api, 'comp_0')));
    call.mockClear();

    const create = new MutationObserver(client, {
      mutationFn: () => {
        computers += 1;
        return Promise.resolve();
      },
      meta: { invalidates: [queryKeys.computers] },
    });
    await create.mutate();
    expect(list.getCurrentResult().data).toHaveLength(2);
    expect(call.mock.calls.map(([route]) => route)).toEqual(['computers.list']);
  });

  it('fetches again after a mutation that failed too (the screen was out of date)', async () => {
    const { api, call } = fakeApi(() => []);
    const client = createQueryClient();
    await show(new QueryObserver(client, computersQuery(api)));
    call.mockClear();
    const end = new MutationObserver(client, {
      mutationFn: () => Promise.reject(new Error('computer not found')),
      meta: { invalidates: [queryKeys.computers] },
    });
    await expect(end.mutate()).rejects.toThrow('computer not found');
    expect(call).toHaveBeenCalledTimes(1);
  });
});

describe('task list filters', () => {
  it('asks for the newest live task of one computer, statuses comma-separated', () => {
    expect(
      taskListSearch({ computer_id: 'comp_1', status: ['running', 'paused'], limit: 1 }),
    ).toEqual({ computer_id: 'comp_1', status: 'running,paused', limit: 1 });
  });

  it('asks for every task without a filter', () => {
    expect(taskListSearch({})).toEqual({});
  });
});
