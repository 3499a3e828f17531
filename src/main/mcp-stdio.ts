import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, defaultDataDir, resolveSettings } from './core/config.js';
import { STOP_SIGNALS } from './core/runtime/process-supervisor.js';
import { markAlive, OWN_MARK } from './core/runtime/process-table.js';
import { readStoredSettings } from './core/store/settings-store.js';
import { createMcpServer } from './mcp/mcp-server.js';
import { serverUrl } from './server/start-server.js';
import { closeWithin } from './core/runtime/shutdown.js';
import { startBenchtop, type AppPaths } from './start-benchtop.js';

const PROBE_TIMEOUT_MS = 1500;

/** stdout carries JSON-RPC only: everything said to a person goes to stderr. */
const log = (message: string) => process.stderr.write(`benchtop mcp: ${message}\n`);

/** Another live Benchtop process recorded a run on the data dir (the window or `serve`). */
function otherRunOn(dataDir: string): boolean {
  try {
    return readdirSync(join(dataDir, 'runs')).some((mark) => mark !== OWN_MARK && markAlive(mark));
  } catch {
    return false;
  }
}

/** The address of the Benchtop that runs on this data dir, if one does and answers there. */
async function runningBenchtop(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const dataDir = defaultDataDir(env);
  const { server } = resolveSettings({ stored: readStoredSettings(dataDir), env });
  if (server.port === 0 || !otherRunOn(dataDir)) return undefined;
  const url = serverUrl(server.host, server.port);
  try {
    const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = (await health.json()) as { status?: string };
    return health.ok && body.status === 'ok' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `stop` once, when stdin ends (the client went) or on a stop signal. */
function onEnd(stop: () => void): void {
  let stopped = false;
  const once = (why: string) => {
    if (stopped) return;
    stopped = true;
    log(`${why}: closing`);
    stop();
  };
  process.stdin.on('end', () => once('stdin closed'));
  process.stdin.on('close', () => once('stdin closed'));
  for (const signal of STOP_SIGNALS) process.on(signal, () => once(signal));
}

/**
 * Relays JSON-RPC between stdio and the running Benchtop's /mcp, so the client acts on the
 * computers the window shows. A request the server cannot take is answered with its reason.
 */
async function bridge(url: string, key: string): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const local = new StdioServerTransport();
  local.onmessage = (message: JSONRPCMessage) => {
    upstream.send(message).catch((error: unknown) => {
      const reason = `Benchtop at ${url} refused the message: ${(error as Error).message}`;
      log(reason);
      if ('id' in message && 'method' in message) {
        void local.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32000, message: reason },
        });
      }
    });
  };
  upstream.onmessage = (message) => void local.send(message);
  upstream.onerror = (error) => log(`connection to ${url}: ${error.message}`);
  await upstream.start();
  await local.start();
  log(`relaying to the Benchtop running at ${url}`);
  onEnd(() =>
    closeWithin(
      async (onStep) => {
        onStep('the relay');
        await upstream.terminateSession().catch(() => {});
        await upstream.close();
      },
      (code) => process.exit(code),
      log,
    ),
  );
}

/**
 * `benchtop mcp`: an MCP server on stdio. With a Benchtop already running on the data dir, it
 * relays to that one's /mcp (one set of supervised computers, the ones the window shows);
 * otherwise it starts Benchtop here, headless, and closes every computer when stdin closes.
 */
export async function serveMcp(paths: AppPaths): Promise<void> {
  // A library or a path of core printing to stdout would corrupt the JSON-RPC stream.
  console.log = console.error;
  console.info = console.error;
  const env = process.env;
  const key = env.TZAFON_API_KEY ?? env.BENCHTOP_API_KEY;
  const url = await runningBenchtop(env);
  if (url) {
    if (!key) {
      throw new ConfigError(
        `a Benchtop is running on this data dir (${url}); to act on its computers, give an API key in TZAFON_API_KEY or BENCHTOP_API_KEY (keys are stored hashed and cannot be read back: create one with \`benchtop keys create\` and put it in the MCP client's env)`,
      );
    }
    return bridge(url, key);
  }
  const benchtop = await startBenchtop({ paths, env, log, makeFirstKey: false }).catch(
    (error: unknown) => {
      // The listen's own error, under the server's ConfigError about it.
      const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
      if (cause?.code !== 'EADDRINUSE') throw error;
      throw new ConfigError(
        `no Benchtop runs on this data dir, and its address is taken by another program (${cause.message}); set BENCHTOP_PORT to a free port (0: any) in the MCP client's env, or BENCHTOP_DATA_DIR to the data dir of the Benchtop that runs there`,
      );
    },
  );
  const principal = key ? benchtop.core.keys.verify(key) : { org: 'local', keyPrefix: undefined };
  if (!principal) {
    await benchtop.close();
    throw new ConfigError(
      'the API key in TZAFON_API_KEY or BENCHTOP_API_KEY is unknown or revoked; create one with `benchtop keys create`, or give none to act as the machine owner',
    );
  }
  const transport = new StdioServerTransport();
  await createMcpServer(benchtop.core, principal.org, principal.keyPrefix).connect(transport);
  log(
    `serving MCP on stdio for organization "${principal.org}"; Benchtop at ${benchtop.server.url}`,
  );
  onEnd(() =>
    closeWithin(
      async (onStep) => {
        onStep('the MCP transport');
        await transport.close();
        await benchtop.close(onStep);
      },
      (code) => process.exit(code),
      log,
    ),
  );
}
