import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A client that goes away while Benchtop sends it a file (a person closing the window as a
 * recording loads, an SDK cancelled mid-download) is the client's doing: nothing to log as
 * Benchtop's failure, and the server goes on serving.
 */

let server: TestServer;
const logged: string[] = [];

beforeAll(async () => {
  server = await startTestServer({}, { log: (line) => logged.push(line) });
});
afterAll(async () => {
  await server?.close();
});

/** Sends a GET on a raw socket and closes it after `ms`, before or while the answer comes. */
function abandon(path: string, ms: number): Promise<void> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n\r\n`,
      );
      setTimeout(() => socket.destroy(), ms);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
}

describe('a file request its client abandons', () => {
  it('is no internal error, and the file is served to the next client', async () => {
    const created = await server.request('POST', '/computers', {});
    const id = created.body.id as string;
    await server.request('POST', `/computers/${id}/navigate`, { url: 'data:text/html,<p>hi</p>' });
    // A file as it is on disk, and one Benchtop writes as it sends it.
    for (const file of ['events', 'har']) {
      const path = `/computers/${id}/recording/${file}`;
      expect((await server.request('GET', path)).status).toBe(200);
      for (let i = 0; i < 60; i++) await abandon(path, i % 4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(logged.filter((line) => line.includes('internal error'))).toEqual([]);
      const again = await server.request('GET', path);
      expect(again.status).toBe(200);
      expect(again.text).toContain(file === 'har' ? '"entries"' : '"type"');
    }
    await server.request('DELETE', `/computers/${id}`);
  });
});
