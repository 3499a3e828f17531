import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseReader } from '../helpers/sse.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** GET /screencasts: several computers' frames on one connection (the window's thumbnails). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const create = async () => (await server.request('POST', '/computers', {})).body.id as string;
const open = (query: string) => SseReader.open(`${server.url}/screencasts${query}`, server.key);
type Data = {
  computer_id: string;
  image_data?: string;
  metadata?: { width: number };
  type?: string;
};

describe('several screencasts on one stream', () => {
  it("sends each computer's frames with its id, at the size asked, and says when one ends", async () => {
    const [a, b] = [await create(), await create()];
    const reader = await open(`?ids=${a},${b}&fps=2&max_width=320`);
    expect(reader.response.status).toBe(200);
    const framesOf = new Map<string, Data>();
    while (framesOf.size < 2) {
      const event = await reader.next();
      if (!event) throw new Error('the stream ended');
      const data = event.data as Data;
      if (data.image_data) framesOf.set(data.computer_id, data);
    }
    expect([...framesOf.keys()].sort()).toEqual([a, b].sort());
    for (const frame of framesOf.values()) expect(frame.metadata!.width).toBeLessThanOrEqual(320);

    expect((await server.request('DELETE', `/computers/${a}`)).status).toBe(204);
    for (;;) {
      const event = await reader.next();
      if (!event) throw new Error('the stream ended before saying the computer ended');
      const data = event.data as Data;
      if (data.type === 'status') {
        expect(data).toMatchObject({ computer_id: a, status: 'terminated' });
        break;
      }
    }
    // The other computer's frames go on.
    expect(reader.ended).toBe(false);
    reader.close();
    await server.request('DELETE', `/computers/${b}`);
  });

  it('refuses an unknown computer before the stream opens, and a list that is empty', async () => {
    const unknown = await server.request('GET', '/screencasts?ids=comp_nope');
    expect(unknown.status).toBe(404);
    const empty = await server.request('GET', '/screencasts?ids=,');
    expect(empty.status).toBe(400);
    expect(empty.body.param).toBe('ids');
  });
});
