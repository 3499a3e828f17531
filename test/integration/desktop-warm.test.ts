import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  displayOf,
  processClock,
  processesOnDisplay,
  readWorkspaceFile,
  startCat,
  typeInTerminal,
  waitForFile,
} from '../helpers/desktop.js';
import { commandOf, descendants, isAlive, notSpawnRelay } from '../helpers/processes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let closed = false;

beforeAll(async () => {
  server = await startTestServer({
    browser: { warm_pool: 0 },
    desktop: { warm_pool: 1 },
    limits: { desktops_per_org: 3 },
  });
});
afterAll(async () => {
  if (!closed) await server?.close();
});

/**
 * The X displays of this server's desktops: those its desktop workers drive (a worker's cookie
 * is in the server's data dir).
 */
async function serverDisplays(): Promise<string[]> {
  const found = new Set<string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = `\0${await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '')}`;
    const display = /\0DISPLAY=(:\d+)\0/.exec(environ)?.[1];
    if (display && environ.includes(`\0XAUTHORITY=${server.dataDir}/`)) found.add(display);
  }
  return [...found];
}

const create = async (body: Record<string, unknown> = {}) => {
  const response = await server.request('POST', '/computers', { kind: 'desktop', ...body });
  expect(response.status, response.text).toBe(200);
  return response.body.id as string;
};

describe('a warm desktop', () => {
  it('is a display started ahead that a create takes whole: terminal, commands and files in its own workspace', async () => {
    // Started with the server, before anyone asked for a desktop.
    await server.core.desktops.whenWarm();
    const spares = await serverDisplays();
    expect(spares).toHaveLength(1);
    const id = await create();
    expect(displayOf(server, id)).toBe(spares[0]);

    await startCat(server, id, 'typed.txt');
    await typeInTerminal(server, id, 'from the terminal\n');
    await waitForFile(server, id, 'typed.txt', (text) => text === 'from the terminal\n');
    const ran = await server.request('POST', `/computers/${id}/exec/sync`, {
      command: 'pwd; echo "$DISPLAY"; echo from-exec > exec.txt',
    });
    expect(ran.body).toMatchObject({ exit_code: 0, stdout: `/workspace\n${spares[0]}\n` });
    expect(await readWorkspaceFile(server, id, 'exec.txt')).toBe('from-exec\n');
    const shot = await server.request('POST', `/computers/${id}/screenshot`, {});
    expect(shot.body.status).toBe('success');

    // Another one waits behind it; ending the computer ends everything on its display.
    await server.core.desktops.whenWarm();
    expect(await serverDisplays()).toHaveLength(2);
    // By pid: Xvfb gives the next spare the lowest free display number, which may be this one.
    const onDisplay = await processesOnDisplay(spares[0]!);
    expect(onDisplay.length).toBeGreaterThanOrEqual(4);
    await server.request('DELETE', `/computers/${id}`);
    expect(onDisplay.filter(isAlive)).toEqual([]);
  }, 90_000);

  it('is not taken by a desktop of another size, which starts its own', async () => {
    await server.core.desktops.whenWarm();
    const [spare, ...others] = await serverDisplays();
    expect(others).toEqual([]);
    const id = await create({ display: { width: 800, height: 600 } });
    expect(displayOf(server, id)).not.toBe(spare);
    expect(await serverDisplays()).toContain(spare);
    await server.request('DELETE', `/computers/${id}`);
  }, 90_000);

  it('ends with Benchtop, leaving nothing on its display', async () => {
    await server.core.desktops.whenWarm();
    const [spare, ...others] = await serverDisplays();
    expect(others).toEqual([]);
    expect((await processesOnDisplay(spare!)).length).toBeGreaterThanOrEqual(3);
    // Everything the server started, the sandbox's own init (in a session of its own) included.
    const started = descendants(process.pid).filter(notSpawnRelay);
    expect(started.filter((pid) => commandOf(pid).startsWith('bwrap')).length).toBeGreaterThan(0);
    closed = true;
    const closing = await processClock();
    await server.close();
    expect(await processesOnDisplay(spare!, { startedBefore: closing })).toEqual([]);
    expect(await serverDisplays()).toEqual([]);
    expect(started.filter(isAlive).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
  }, 90_000);
});
