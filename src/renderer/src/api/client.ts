import type { ActionResult } from '../../../shared/actions.js';
import type { ErrorBody } from '../../../shared/errors.js';
import type { Connection } from './connection.js';
import { readSse, type SseMessage } from './sse-stream.js';

/** An API answer that is not a success, with the server's sentence for a person. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The HTTP API with the window's key: the only way the UI reaches Benchtop. */
export class Api {
  constructor(readonly connection: Connection) {}

  url(path: string): string {
    return `${this.connection.baseUrl}${path}`;
  }

  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal) {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.connection.apiKey}`,
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(this.url(path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError(`cannot reach Benchtop at ${this.connection.baseUrl}`, 0);
    }
    if (!response.ok) throw await toApiError(response);
    return response;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }

  /** A computer action: an action that ran but failed is a 200 with status error, thrown here. */
  async act(computerId: string, action: string, body: unknown = {}): Promise<ActionResult> {
    const result = await this.post<ActionResult>(`/computers/${computerId}/${action}`, body);
    if (result.status === 'error') {
      throw new ApiError(result.error_message ?? `${action} failed`, 200);
    }
    return result;
  }

  /** Follows an SSE stream until the server ends it or the signal aborts. */
  async stream(
    path: string,
    onMessage: (message: SseMessage) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const response = await this.send('GET', path, undefined, signal);
    if (!response.body) throw new ApiError(`no stream from ${path}`, response.status);
    await readSse(response.body, onMessage);
  }
}

async function toApiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof body.message === 'string') {
      return new ApiError(body.message, response.status, body.code, body.param);
    }
  } catch {
    // Not the API's error shape (a proxy, a crash page): fall back to the status line.
  }
  return new ApiError(`${response.status} ${response.statusText || 'error'}`, response.status);
}
