import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The README's CDP examples (examples/cdp) run as a user runs them: a child Node process with
 * LIGHTCONE_BASE_URL and TZAFON_API_KEY set, against the real server. They load no page from the
 * network, so they pass offline.
 */

const run = promisify(execFile);
const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples', 'cdp');

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

async function example(file: string): Promise<string> {
  const { stdout } = await run(process.execPath, [join(EXAMPLES, file)], {
    env: { ...process.env, LIGHTCONE_BASE_URL: server.url, TZAFON_API_KEY: server.key },
    timeout: 60_000,
  });
  return stdout;
}

describe('examples/cdp', () => {
  it('playwright.mjs clicks in a computer it created, and deletes it', async () => {
    const output = await example('playwright.mjs');
    expect(output).toContain('page says: clicked by Playwright');
    expect(output).toMatch(/Benchtop lists 2 tabs of comp_/);
    expect(server.core.computers.list('local')).toEqual([]);
  });

  it('puppeteer.mjs clicks in a computer it created, and deletes it', async () => {
    const output = await example('puppeteer.mjs');
    expect(output).toContain('page says: clicked by Puppeteer');
    expect(output).toContain('Benchtop reads the same page: true');
    expect(server.core.computers.list('local')).toEqual([]);
  });
});
