import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings, type SettingsInput } from '../../src/main/core/config.js';
import { createCore, type Core } from '../../src/main/core/create-core.js';
import { readStoredSettings } from '../../src/main/core/store/settings-store.js';
import { startServer } from '../../src/main/server/start-server.js';

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
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
};

export function testKey(): string {
  return `sk_test_${randomBytes(16).toString('hex')}`;
}

/** The real server on port 0 with a fresh data dir and a key for organization `local`. */
export async function startTestServer(
  settings: SettingsInput = {},
  options: { dataDir?: string; log?: (line: string) => void } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'benchtop-test-'));
  const key = testKey();
  // What a test passes acts as command-line flags: above config.json, which a restart re-reads.
  const flags = {
    ...settings,
    server: { port: 0, ...settings.server },
    browser: { warm_pool: 1, ...settings.browser },
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
  const core = await createCore({ settings: resolved, dataDir, trustedKey: key, overrides: flags });
  const server = await startServer(core, { log: options.log ?? (() => {}) });
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ) => {
    const headers: Record<string, string> = { ...opts.headers };
    const auth = opts.key === undefined ? key : opts.key;
    if (auth !== null) headers.authorization = `Bearer ${auth}`;
    let payload: string | undefined = opts.raw;
    if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
    const contentType =
      opts.contentType === undefined
        ? payload !== undefined
          ? 'application/json'
          : undefined
        : opts.contentType;
    if (contentType) headers['content-type'] = contentType;
    const response = await fetch(`${server.url}${path}`, { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON (an image, an empty 204): callers look at text.
    }
    return { status: response.status, body: parsed as any, headers: response.headers, text };
  };
  return {
    url: server.url,
    key,
    core,
    dataDir,
    request,
    async close() {
      await server.close();
      await core.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until check returns a truthy value (for effects that settle asynchronously, like wheel scrolling). */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
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
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
