import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { exposeConnection } from '../../src/preload/expose-connection.js';
import {
  connectionArguments,
  connectionFromArguments,
  sdkSnippet,
} from '../../src/shared/window-connection.js';

const connection = { baseUrl: 'http://127.0.0.1:4422', apiKey: `sk_${'k'.repeat(32)}` };
/** What Chromium puts before the appended arguments in a renderer's argv. */
const rendererArgv = (extra: string[]) => [
  '/opt/Benchtop/benchtop',
  '--type=renderer',
  '--enable-sandbox',
  ...extra,
];

function fakeBridge() {
  const exposed: Record<string, unknown> = {};
  return { exposed, exposeInMainWorld: (key: string, api: unknown) => (exposed[key] = api) };
}

describe('the connection from main to the preload', () => {
  it('survives the trip through the renderer command line', () => {
    for (const baseUrl of ['http://127.0.0.1:4422', 'http://[::1]:80', 'https://box.local:9']) {
      const sent = { baseUrl, apiKey: `sk_${'a_-Z9'.repeat(8)}` };
      expect(connectionFromArguments(rendererArgv(connectionArguments(sent)))).toEqual(sent);
    }
  });

  it('is refused when missing or malformed, rather than half trusted', () => {
    const encoded = (value: unknown) =>
      `--benchtop-connection=${encodeURIComponent(JSON.stringify(value))}`;
    for (const argv of [
      [],
      ['--benchtop-connection='],
      ['--benchtop-connection=%E0%A4%A'],
      ['--benchtop-connection={not json'],
      [encoded(null)],
      [encoded({ baseUrl: connection.baseUrl })],
      [encoded({ ...connection, apiKey: 'not-a-key' })],
      [encoded({ ...connection, baseUrl: 'file:///etc' })],
      [encoded({ ...connection, baseUrl: 'http://127.0.0.1:4422/ui/' })],
      [encoded({ ...connection, baseUrl: 'http://127.0.0.1:4422/' })],
      [encoded({ ...connection, baseUrl: 'http://user:pw@127.0.0.1:4422' })],
    ]) {
      expect(connectionFromArguments(rendererArgv(argv)), argv.join(' ')).toBeUndefined();
    }
  });

  it('the preload exposes window.benchtop = {connection, platform} and nothing else', () => {
    const bridge = fakeBridge();
    exposeConnection(bridge, rendererArgv(connectionArguments(connection)), 'darwin');
    expect(bridge.exposed).toEqual({ benchtop: { connection, platform: 'darwin' } });
  });

  it('the preload exposes nothing without a valid connection', () => {
    const bridge = fakeBridge();
    expect(exposeConnection(bridge, rendererArgv([]), 'linux')).toBeUndefined();
    expect(bridge.exposed).toEqual({});
  });

  it('the built preload runs in a sandbox that can require only electron', () => {
    // What `npm run build` produced (npm test builds first); a sandboxed preload gets no Node.
    const bundle = join(import.meta.dirname, '..', '..', 'out', 'preload', 'index.cjs');
    expect(existsSync(bundle), `${bundle} (run npm run build)`).toBe(true);
    const bridge = fakeBridge();
    const required: string[] = [];
    const sandbox = {
      require(name: string) {
        required.push(name);
        if (name !== 'electron') throw new Error(`module not found: ${name}`);
        return { contextBridge: bridge };
      },
      process: { argv: rendererArgv(connectionArguments(connection)), platform: 'win32' },
      // A preload runs in a web page: it has the web's globals, not Node's.
      URL,
      module: { exports: {} },
      exports: {},
    };
    vm.runInNewContext(readFileSync(bundle, 'utf8'), sandbox, { filename: bundle });
    expect(required).toEqual(['electron']);
    expect(JSON.parse(JSON.stringify(bridge.exposed))).toEqual({
      benchtop: { connection, platform: 'win32' },
    });
  });

  it('the SDK snippet is one line a shell takes', () => {
    expect(sdkSnippet(connection.baseUrl, connection.apiKey)).toBe(
      `export LIGHTCONE_BASE_URL=http://127.0.0.1:4422 TZAFON_API_KEY=${connection.apiKey}`,
    );
  });
});
