import type { ActionEndpoint } from '../../../shared/actions.js';
import {
  ApiError,
  createApiClient,
  type ApiClient,
  type CallInput,
} from '../../../shared/client/api-client.js';
import { WINDOW_SOURCE } from '../../../shared/requester.js';
import type { Connection } from './connection.js';

/**
 * The typed client with the window's key, every request marked as a person's (WINDOW_SOURCE);
 * an unreachable server is named in the error. `onKeyRejected` hears of an answer saying the key
 * is not (or no longer) valid: unknown or revoked, or the address blocked for requests without a
 * valid key.
 */
export function createWindowClient(connection: Connection, onKeyRejected?: () => void): ApiClient {
  return createApiClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set(WINDOW_SOURCE.header, WINDOW_SOURCE.value);
      let response: Response;
      try {
        response = await fetch(input, { ...init, headers });
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        throw new ApiError(0, 'unreachable', `cannot reach Benchtop at ${connection.baseUrl}`);
      }
      if (onKeyRejected && (await keyRejected(response))) onKeyRejected();
      return response;
    },
  });
}

async function keyRejected(response: Response): Promise<boolean> {
  if (response.status === 401) return true;
  if (response.status !== 403) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { code?: unknown } | undefined;
  return body?.code === 'ip_blocked';
}

type ActionRouteName = `actions.${ActionEndpoint}`;

/**
 * A computer action by its endpoint, as a person performs it from the live view (the window's only
 * caller): one that ran but failed (a 200 with status error) throws.
 */
export async function act<S extends ActionEndpoint>(
  api: ApiClient,
  computerId: string,
  endpoint: S,
  body: CallInput<`actions.${S}`>['body'],
): Promise<void> {
  // The signature pairs the endpoint with its body; inside, TypeScript sees any action route.
  const answer = await api.call(`actions.${endpoint}` as ActionRouteName, {
    params: { id: computerId },
    body: body as CallInput<ActionRouteName>['body'],
  });
  if (answer.status === 'error') throw new ApiError(200, 'action_failed', answer.error_message);
}
