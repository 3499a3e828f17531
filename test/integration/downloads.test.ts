import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * What a browser computer downloads is kept in its own folder while it runs: listed, served as an
 * attachment, announced on its events stream; after its end, its recording keeps them.
 */

let server: TestServer;
let fixtures: FixtureServer;
/** Answers /slow with the start of a file and never the rest: a download that stays under way. */
let slow: Server;
let slowUrl: string;

const INVOICE = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'invoice.csv'));

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
  slow = createServer((_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/zip',
      'content-disposition': 'attachment; filename="archive.zip"',
      'content-length': String(10 * 1024 * 1024),
    });
    res.write(Buffer.alloc(64 * 1024));
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
});
afterAll(async () => {
  slow?.closeAllConnections();
  slow?.close();
  await Promise.all([server?.close(), fixtures?.close()]);
});

async function browser(): Promise<string> {
  const created = await server.request('POST', '/computers', {});
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}
const act = (id: string, action: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/computers/${id}/${action}`, body);
const listed = async (id: string) =>
  (await server.request('GET', `/computers/${id}/downloads`)).body.data as Array<{
    name: string;
    size_bytes: number;
    created_at: string;
  }>;

describe('downloads of a browser computer', () => {
  it('keeps a clicked link and a file the page made, lists them and serves each as an attachment', async () => {
    const id = await browser();
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    expect((await listed(id)).length).toBe(0);
    expect((await act(id, 'navigate', { url: `${fixtures.url}/downloads.html` })).body.status).toBe(
      'success',
    );
    expect((await act(id, 'click', { x: 100, y: 40 })).body.status).toBe('success');
    expect((await act(id, 'click', { x: 100, y: 100 })).body.status).toBe('success');
    // The same link again: a second file of that name, both kept.
    expect((await act(id, 'click', { x: 100, y: 40 })).body.status).toBe('success');
    const files = await eventually(async () => {
      const now = await listed(id);
      return now.length === 3 && now;
    }, 10_000);
    expect(files.map((file) => file.name).sort()).toEqual([
      'invoice (1).csv',
      'invoice.csv',
      'report.csv',
    ]);
    expect(files.find((file) => file.name === 'invoice.csv')!.size_bytes).toBe(INVOICE.length);

    const file = await fetch(`${server.url}/computers/${id}/downloads/invoice.csv`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(INVOICE);
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename=invoice.csv');
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    const made = await server.request('GET', `/computers/${id}/downloads/report.csv`);
    expect(made.text).toBe('total,12.00\n');

    const announced = (await events.collect(500))
      .map((event) => event.data as Record<string, unknown>)
      .filter((event) => event.type === 'download');
    events.close();
    const states = (name: string) =>
      announced.filter((event) => event.name === name).map((event) => event.state);
    for (const name of ['invoice.csv', 'invoice (1).csv', 'report.csv']) {
      expect(states(name), name).toEqual(['started', 'saved']);
    }
    expect(announced).toContainEqual(
      expect.objectContaining({
        computer_id: id,
        state: 'saved',
        name: 'invoice.csv',
        url: `${fixtures.url}/invoice.csv`,
        size_bytes: INVOICE.length,
        error: null,
        tab_id: expect.stringMatching(/^tab_/),
      }),
    );
    await server.request('DELETE', `/computers/${id}`);
  });

  it('keeps the file of a navigate that downloads, and says where it went', async () => {
    const id = await browser();
    const file = `${fixtures.url}/invoice.csv`;
    const answer = await act(id, 'navigate', { url: file });
    expect(answer.body.status).toBe('error');
    expect(answer.body.error_message).toBe(
      `${file} started a download instead of loading a page; the file goes to the computer's downloads and the tab stays where it was`,
    );
    const files = await eventually(async () => {
      const now = await listed(id);
      return now.length === 1 && now;
    }, 10_000);
    expect(files[0]).toMatchObject({ name: 'invoice.csv', size_bytes: INVOICE.length });
    await server.request('DELETE', `/computers/${id}`);
  });

  it('answers 404 for a name it did not download, a file being written and a path', async () => {
    const id = await browser();
    await act(id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
    await eventually(async () => (await listed(id)).length === 1, 10_000);
    for (const name of ['nothing.csv', '.invoice.csv.part', '..%2F..%2Fbenchtop.sqlite']) {
      const answer = await server.request('GET', `/computers/${id}/downloads/${name}`);
      expect(answer.status, name).toBe(404);
      expect(answer.body.message, name).toContain('(downloads: invoice.csv)');
    }
    await server.request('DELETE', `/computers/${id}`);
  });

  it('is no place of another organization', async () => {
    const id = await browser();
    await act(id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
    await eventually(async () => (await listed(id)).length === 1, 10_000);
    const other = server.core.keys.create('other').key;
    for (const path of [`/computers/${id}/downloads`, `/computers/${id}/downloads/invoice.csv`]) {
      expect((await server.request('GET', path, undefined, { key: other })).status, path).toBe(404);
    }
    await server.request('DELETE', `/computers/${id}`);
  });

  it('outlives the computer in its recording, until the recording is deleted', async () => {
    const id = await browser();
    await act(id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
    await eventually(async () => (await listed(id)).length === 1, 10_000);
    await server.request('DELETE', `/computers/${id}`);
    expect(existsSync(join(server.dataDir, 'computers', id))).toBe(false);

    expect(await listed(id)).toEqual([expect.objectContaining({ name: 'invoice.csv' })]);
    const file = await server.request('GET', `/computers/${id}/downloads/invoice.csv`);
    expect(Buffer.from(file.text)).toEqual(INVOICE);
    const recording = await server.request('GET', `/computers/${id}/recording`);
    expect(recording.body.downloads).toEqual([
      expect.objectContaining({ name: 'invoice.csv', size_bytes: INVOICE.length }),
    ]);

    expect((await server.request('DELETE', `/computers/${id}/recording`)).status).toBe(204);
    const gone = await server.request('GET', `/computers/${id}/downloads`);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toContain('has ended (deleted');
  });

  it('goes with a computer that is not recorded', async () => {
    const created = await server.request('POST', '/computers', { recording: false });
    const id = created.body.id as string;
    await act(id, 'navigate', { url: `${fixtures.url}/invoice.csv` });
    await eventually(async () => (await listed(id)).length === 1, 10_000);
    await server.request('DELETE', `/computers/${id}`);
    const gone = await server.request('GET', `/computers/${id}/downloads`);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toContain('has ended (deleted');
    expect(existsSync(join(server.dataDir, 'computers', id))).toBe(false);
  });

  it('ends a computer whose download is still under way at once, leaving nothing behind', async () => {
    const id = await browser();
    const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
    await act(id, 'navigate', { url: slowUrl });
    const download = async () =>
      (await events.collect(100))
        .map((event) => event.data as Record<string, unknown>)
        .filter((event) => event.type === 'download');
    const started = await eventually(
      async () => (await download()).find((event) => event.state === 'started'),
      10_000,
    );
    expect(started).toMatchObject({ name: 'archive.zip', url: slowUrl });
    const deleted = await server.request('DELETE', `/computers/${id}`);
    expect(deleted.status).toBe(204);
    expect(existsSync(join(server.dataDir, 'computers', id))).toBe(false);
    events.close();
    // Nothing of it is left, in the computer's folder or in its recording.
    expect(await listed(id)).toEqual([]);
    expect(existsSync(join(server.dataDir, 'recordings', id, 'downloads'))).toBe(false);
  });
});
