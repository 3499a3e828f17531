import { createApiClient, type ApiClient } from '../src/shared/client/api-client.js';
import { TERMINAL_EVENTS, type TaskEvent } from '../src/shared/tasks.js';
import { timed } from './sampling.js';

/** What a 2xx answer must also say for a call to count; anything else is an error. */
type Expect = 'ok' | 'action' | 'batch';
type ActionAnswer = { status?: string; error_message?: string };
type BatchAnswer = { success?: boolean; error_message?: string | null };
export type Display = { width: number; height: number };

/**
 * The API as a client sees it: the project's client over fetch (whose global agent keeps
 * connections alive), reading and parsing the answer, and checking it, all inside the timing.
 * Requests go by method and path (the client's raw call), so a case reads like the HTTP it times.
 */
export class BenchClient {
  private readonly api: ApiClient;

  constructor(baseUrl: string, apiKey: string) {
    this.api = createApiClient({ baseUrl, apiKey });
  }

  async request(method: string, path: string, body?: unknown, expect: Expect = 'ok') {
    const answer = await this.api.raw(method, path, body);
    if (answer.status < 200 || answer.status >= 300) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    }
    const parsed = answer.body;
    if (expect === 'action' && (parsed as ActionAnswer).status !== 'success') {
      throw new Error(`${method} ${path} failed: ${(parsed as ActionAnswer).error_message}`);
    }
    if (expect === 'batch' && !(parsed as BatchAnswer).success) {
      throw new Error(`${method} ${path} failed: ${(parsed as BatchAnswer).error_message}`);
    }
    return parsed;
  }

  /** One request; the milliseconds it took. */
  timed(method: string, path: string, body?: unknown, expect?: Expect): Promise<number> {
    return timed(() => this.request(method, path, body, expect));
  }

  async create(
    display?: Display,
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; ms: number }> {
    const body = {
      kind: 'browser',
      ...(display && { display: { ...display, scale: 1 } }),
      ...extra,
    };
    let id = '';
    const ms = await timed(async () => {
      ({ id } = (await this.request('POST', '/computers', body)) as { id: string });
    });
    return { id, ms };
  }

  /** create → navigate → screenshot → delete, timed as a whole. */
  cycle(url: string, display?: Display): Promise<number> {
    return timed(async () => {
      const { id } = await this.create(display);
      await this.request('POST', `/computers/${id}/navigate`, { url }, 'action');
      await this.request('POST', `/computers/${id}/screenshot`, {}, 'action');
      await this.request('DELETE', `/computers/${id}`);
    });
  }

  /**
   * The terminal event of a task, read from its events stream as soon as it is sent (no polling:
   * a client asking every few milliseconds would load the machine the task runs on).
   */
  async taskEnd(taskId: string): Promise<TaskEvent> {
    for await (const { data } of this.api.events('tasks.events', { params: { id: taskId } })) {
      if (TERMINAL_EVENTS.has(data.type)) return data;
    }
    throw new Error(`the events of task ${taskId} ended before the task did`);
  }
}
