import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings, type SettingsInput } from '../../src/main/core/config.js';
import { createCore, type Core } from '../../src/main/core/create-core.js';
import { readStoredSettings } from '../../src/main/core/store/settings-store.js';
import type { SseOptions } from '../../src/main/server/sse.js';
import { startServer } from '../../src/main/server/start-server.js';
import { createApiClient, type ApiClient } from '../../src/shared/client/api-client.js';
import type { AppPaths } from '../../src/main/start-benchtop.js';
import { sourceAppPaths } from './app-paths.js';

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers; text: string };

export type RequestOptions = {
  key?: string | null;
  /** A raw body sent as is (for malformed input); otherwise `body` is sent as JSON. */
  raw?: string;
  contentType?: string | null;
  headers?: Record<string, string>;
};

export type TestServer = {
  url: string;
  key: string;
  core: Core;
  dataDir: string;
  /** Any request, answered as it came (bad input included); `T` is what the test expects. */
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<ApiResponse<T>>;
  /** The typed client of the API, with the server's key. */
  api: ApiClient;
  close(): Promise<void>;
};

export function testKey(): string {
  return `sk_test_${randomBytes(16).toString('hex')}`;
}

/** The real server on port 0 with a fresh data dir and a key for organization `local`. */
export async function startTestServer(
  settings: SettingsInput = {},
  options: {
    dataDir?: string;
    log?: (line: string) => void;
    sse?: SseOptions;
    /** The built app's paths (the bench measures what ships); the sources' by default. */
    paths?: AppPaths;
  } = {},
): Promise<TestServer> {
  // Inside a dot folder, as the default data dir is (~/.config/benchtop).
  const home = options.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'benchtop-test-'));
  const dataDir = options.dataDir ?? join(home!, '.config', 'benchtop');
  mkdirSync(dataDir, { recursive: true });
  const key = testKey();
  // What a test passes acts as command-line flags: above config.json, which a restart re-reads.
  const flags = {
    ...settings,
    server: { port: 0, ...settings.server },
    browser: { warm_pool: 1, ...settings.browser },
    // A spare desktop costs every test server a display's start: only the suites about desktops
    // ask for one.
    desktop: { warm_pool: 0, ...settings.desktop },
    // Suites send hundreds of requests a second, and bad keys on purpose, all from 127.0.0.1;
    // test/integration/security.test.ts sets these limits itself.
    limits: {
      requests_per_second: 1_000_000,
      burst: 1_000_000,
      auth_failures_before_block: 1_000_000,
      ...settings.limits,
    },
  };
  const resolved = resolveSettings({ stored: readStoredSettings(dataDir), env: {}, flags });
  const paths = options.paths ?? sourceAppPaths();
  const core = await createCore({
    settings: resolved,
    dataDir,
    trustedKey: key,
    overrides: flags,
    workerEntry: paths.workerEntry,
    // What core reports in the background (a video that could not be encoded) shows in the run.
    log: (message) => console.error(`[core] ${message}`),
  });
  const server = await startServer(core, {
    log: options.log ?? showContractMismatches,
    sse: options.sse,
    uiDir: paths.uiDir,
  });
  const api = createApiClient({ baseUrl: server.url, apiKey: key });
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<ApiResponse> => {
    const response = await api.raw(method, path, body, {
      rawBody: opts.raw,
      contentType: opts.contentType,
      headers: opts.headers,
      apiKey: opts.key,
    });
    return { ...response, body: response.body as any };
  };
  return {
    url: server.url,
    key,
    core,
    dataDir,
    request,
    api,
    async close() {
      await server.close();
      await core.close();
      if (home) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Polls until check returns a truthy value (for effects that settle asynchronously, like wheel scrolling). */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: Error | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error as Error;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** By default a test server logs nothing but answers that break the contract (they fail the test too). */
function showContractMismatches(line: string): void {
  if (line.includes('does not match the contract')) console.error(line);
}
