import { queryOptions } from '@tanstack/react-query';
import type { Tab } from '../../../shared/actions.js';
import type { Computer, Environment } from '../../../shared/computers.js';
import { ApiError, type ApiClient, type CallInput } from '../../../shared/client/api-client.js';
import { RECORDING_FILES, type RecordedEvent } from '../../../shared/recordings.js';
import type { TaskStatus } from '../../../shared/tasks.js';
import type { UsageRow } from '../../../shared/usage.js';

type TaskListInput = NonNullable<CallInput<'tasks.list'>['query']>;

/** Which model calls a usage view reads (GET /v1/usage filters). */
export type UsageFilter = { task_id?: string; since?: string };
/** Pages read at most: beyond them a view says the list is cut (a window is not a report tool). */
const USAGE_PAGES = 20;

/** Which tasks a list asks the server for (GET /agent/tasks filters). */
export type TaskFilter = { computer_id?: string; status?: readonly TaskStatus[]; limit?: number };

/** A task that still holds its computer. */
export const LIVE_STATUSES: readonly TaskStatus[] = ['running', 'paused'];

/**
 * One key per resource. A mutation invalidates a prefix: `computers` covers the list and each
 * computer, `tasks` every task list and each task. Tabs have a root of their own: listing them
 * counts as activity on the computer, so a change to computers must not list them again.
 */
export const queryKeys = {
  computers: ['computers'] as const,
  computer: (id: string) => ['computers', 'one', id] as const,
  environments: ['environments'] as const,
  tabs: (computerId: string) => ['tabs', computerId] as const,
  downloads: (computerId: string) => ['downloads', computerId] as const,
  tasks: ['tasks'] as const,
  taskList: (filter: TaskFilter) => ['tasks', 'list', filter] as const,
  task: (id: string) => ['tasks', 'one', id] as const,
  recordingList: ['recordings', 'list'] as const,
  recording: (computerId: string) => ['recordings', 'one', computerId] as const,
  recordingEvents: (computerId: string, version: string) =>
    ['recordings', 'events', computerId, version] as const,
  recordingVideo: (computerId: string, version: string) =>
    ['recordings', 'video', computerId, version] as const,
  models: ['models'] as const,
  settings: ['settings'] as const,
  backends: ['backends'] as const,
  policies: ['policies'] as const,
  attention: ['attention'] as const,
  pendingApprovals: ['approvals', 'pending'] as const,
  keys: ['keys'] as const,
  secrets: ['secrets'] as const,
  usage: (filter: UsageFilter) => ['usage', filter] as const,
};

/**
 * How often a screen that shows a resource fetches it again (a screen that needs it less often
 * may poll more slowly). Components showing the same resource share one cached answer, and a
 * fetch started while another is on its way joins it.
 */
const POLL_MS = {
  computers: 2000,
  computer: 2000,
  environments: 10_000,
  tasks: 2000,
  task: 1500,
  recordings: 3000,
  recording: 3000,
  models: 30_000,
  // A backend's health is checked every second; its status and load show within two.
  backends: 2000,
  keys: 10_000,
  usage: 5000,
  // A person waits on these: an action held for them should show within a second.
  attention: 1000,
  approvals: 1000,
};

/** A computer's downloads: read again when its events announce one, not polled. */
export const downloadsQuery = (api: ApiClient, computerId: string) =>
  queryOptions({
    queryKey: queryKeys.downloads(computerId),
    queryFn: async ({ signal }) =>
      (await api.call('computers.downloads', { params: { id: computerId }, signal })).data,
  });

export const computersQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.computers,
    // Without type=persistent the list holds running computers.
    queryFn: async ({ signal }) => (await api.call('computers.list', { signal })) as Computer[],
    refetchInterval: POLL_MS.computers,
  });

export const computerQuery = (api: ApiClient, id: string) =>
  queryOptions({
    queryKey: queryKeys.computer(id),
    queryFn: ({ signal }) => api.call('computers.get', { params: { id }, signal }),
    // One Benchtop no longer holds (ended over an hour ago, or before a restart) stays gone.
    refetchInterval: (query) => (isNotFound(query.state.error) ? false : POLL_MS.computer),
  });

/** Saved environments (persistent computers that ended), to restore into a new computer. */
export const environmentsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.environments,
    queryFn: async ({ signal }) =>
      (await api.call('computers.list', {
        query: { type: 'persistent' },
        signal,
      })) as Environment[],
    refetchInterval: POLL_MS.environments,
  });

export const taskListQuery = (api: ApiClient, filter: TaskFilter = {}) =>
  queryOptions({
    queryKey: queryKeys.taskList(filter),
    queryFn: ({ signal }) => api.call('tasks.list', { query: taskListSearch(filter), signal }),
    refetchInterval: POLL_MS.tasks,
  });

export const taskQuery = (api: ApiClient, id: string) =>
  queryOptions({
    queryKey: queryKeys.task(id),
    queryFn: ({ signal }) => api.call('tasks.get', { params: { id }, signal }),
    refetchInterval: POLL_MS.task,
  });

/** The newest `limit` recordings (the API's default is 100). */
export const recordingsQuery = (api: ApiClient, limit = 100) =>
  queryOptions({
    queryKey: [...queryKeys.recordingList, limit],
    queryFn: async ({ signal }) =>
      (await api.call('recordings.list', { query: { limit }, signal })).data,
    refetchInterval: POLL_MS.recordings,
  });

export const recordingQuery = (api: ApiClient, computerId: string) =>
  queryOptions({
    queryKey: queryKeys.recording(computerId),
    queryFn: ({ signal }) => api.call('recordings.get', { params: { id: computerId }, signal }),
    refetchInterval: POLL_MS.recording,
  });

/**
 * A recording's events file, read once per `version` (see videoVersion: a recording that still
 * grows is read again when it ends or a person asks). Not polled: it can be long.
 */
export const recordingEventsQuery = (api: ApiClient, computerId: string, version: string) =>
  queryOptions({
    queryKey: queryKeys.recordingEvents(computerId, version),
    queryFn: async ({ signal }) =>
      parseNdjson(await api.call('recordings.events', { params: { id: computerId }, signal })),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });

/**
 * A recording's video as a Blob: the video route needs the key, which a <video src> cannot send.
 * Read once per `version`, and dropped from the cache as soon as no screen shows it.
 */
export const recordingVideoQuery = (api: ApiClient, computerId: string, version: string) =>
  queryOptions({
    queryKey: queryKeys.recordingVideo(computerId, version),
    queryFn: async ({ signal }) => {
      const bytes = await api.call('recordings.video', { params: { id: computerId }, signal });
      return new Blob([bytes as Uint8Array<ArrayBuffer>], {
        type: RECORDING_FILES.video.content_type,
      });
    },
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
  });

/** The lines of an NDJSON answer (a recording's events), each parsed. */
export function parseNdjson(bytes: Uint8Array): RecordedEvent[] {
  return new TextDecoder()
    .decode(bytes)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RecordedEvent);
}

export const modelsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.models,
    queryFn: ({ signal }) => api.call('models.list', { signal }),
    refetchInterval: POLL_MS.models,
  });

export const settingsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.settings,
    queryFn: ({ signal }) => api.call('settings.get', { signal }),
  });

/** Where browser computers run (settings' browser.backends): each one's status and load. */
export const backendsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.backends,
    queryFn: ({ signal }) => api.call('backends.list', { signal }),
    refetchInterval: POLL_MS.backends,
  });

/** What waits for a person, oldest first: the Needs-you queue and the navigation's count. */
export const attentionQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.attention,
    queryFn: ({ signal }) => api.call('attention.list', { signal }),
    refetchInterval: POLL_MS.attention,
  });

/** The held actions, for what the queue shows of each (screenshot, target, reason). */
export const pendingApprovalsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.pendingApprovals,
    queryFn: ({ signal }) =>
      api.call('approvals.list', { query: { status: 'pending', limit: 1000 }, signal }),
    refetchInterval: POLL_MS.approvals,
  });

/** The policies, read when the settings open, not again behind the back of a person editing. */
export const policiesQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.policies,
    queryFn: ({ signal }) => api.call('policies.get', { signal }),
    refetchOnWindowFocus: false,
  });

/**
 * A browser's tabs. Listing them counts as activity on the computer, so they are never polled:
 * each screen says when to read them again (a tab event, a tab action, a person asking).
 */
export const tabsQuery = (api: ApiClient, computerId: string) =>
  queryOptions({
    queryKey: queryKeys.tabs(computerId),
    refetchOnWindowFocus: false,
    queryFn: async ({ signal }): Promise<Tab[]> => {
      const answer = await api.call('tabs.list', {
        params: { id: computerId },
        signal,
      });
      // A failed listing (status error) has no tabs to show.
      return answer.status === 'success' ? answer.result.tabs : [];
    },
  });

export const secretsQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.secrets,
    queryFn: ({ signal }) => api.call('secrets.list', { signal }),
    refetchInterval: POLL_MS.keys,
  });

export const apiKeysQuery = (api: ApiClient) =>
  queryOptions({
    queryKey: queryKeys.keys,
    queryFn: ({ signal }) => api.call('keys.list', { signal }),
    refetchInterval: POLL_MS.keys,
  });

/** The query of GET /agent/tasks for a filter: statuses are one comma-separated value. */
export function taskListSearch({ status, ...rest }: TaskFilter): TaskListInput {
  return status ? { ...rest, status: status.join(',') } : rest;
}

/**
 * The organization's model calls matching the filter, oldest first, page after page. `cut` says
 * there were more than the window reads.
 */
export const usageQuery = (api: ApiClient, filter: UsageFilter) =>
  queryOptions({
    queryKey: queryKeys.usage(filter),
    queryFn: async ({ signal }) => {
      const rows: UsageRow[] = [];
      let after: string | undefined;
      for (let page = 0; page < USAGE_PAGES; page++) {
        const answer = await api.call('usage.list', {
          query: { ...filter, limit: 1000, ...(after ? { after } : {}) },
          signal,
        });
        rows.push(...answer.data);
        if (!answer.has_more) return { rows, cut: false };
        after = answer.last_id ?? undefined;
      }
      return { rows, cut: true };
    },
    refetchInterval: POLL_MS.usage,
  });

/** A 404 from the API: what was asked for is not there (or not this key's organization's). */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
