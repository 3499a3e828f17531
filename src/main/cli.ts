import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ConfigError, defaultDataDir, listensEverywhere, resolveSettings } from './core/config.js';
import { LIFT_FILE, readBlocks, writeAtomically } from './core/guards/ip-block-files.js';
import { KeyStore } from './core/store/key-store.js';
import { STOP_SIGNALS } from './core/runtime/process-supervisor.js';
import { preparePrivateDataDir } from './core/store/private-files.js';
import { closeWithin } from './core/runtime/shutdown.js';
import { readStoredSettings } from './core/store/settings-store.js';

const USAGE = `usage:
  benchtop serve [--port N] [--host ADDRESS]
  benchtop mcp          MCP over stdio (TZAFON_API_KEY or BENCHTOP_API_KEY: the key to act with)
  benchtop keys create [--org NAME]
  benchtop keys list
  benchtop keys revoke KEY_ID
  benchtop ip-blocks [list]
  benchtop ip-blocks lift IP|--all`;

/*
 * The server and the MCP door are imported only by the commands that start them: `keys` and
 * `ip-blocks` then answer in 0.3 s instead of 1.4 s (Playwright and the API's routes, loaded).
 */
async function serve(values: { port?: string; host?: string }): Promise<void> {
  const server: Record<string, unknown> = {};
  if (values.port !== undefined) server.port = Number(values.port);
  if (values.host !== undefined) server.host = values.host;
  // The /ui/ link carries a key of this process only (not stored; gone when Benchtop stops).
  const uiKey = `sk_${randomBytes(24).toString('base64url')}`;
  const { builtAppPaths, startBenchtop } = await import('./start-benchtop.js');
  const benchtop = await startBenchtop({
    // This file is out/main/cli.js: the built app's files are found from here, once.
    paths: builtAppPaths(import.meta.dirname),
    flags: Object.keys(server).length ? { server } : undefined,
    windowKey: uiKey,
  });
  const { url } = benchtop.server;
  // Asked before anything is printed: a caller that acts on the printed lines (a signal, say)
  // finds the handlers below already in place.
  const { sandboxSupport } = await import('./core/sandbox/computer-sandbox.js');
  const sandbox = await sandboxSupport();
  const banner = [`listening on ${url}`, `the window: ${url}/ui/#key=${uiKey}`];
  const { host } = benchtop.core.settings.server;
  if (listensEverywhere(host)) {
    banner.push(
      `it listens on every address of this machine (server.host ${host}): another machine reaches it by this machine's name or address once server.allowed_hosts lists that name`,
    );
  }
  if (!sandbox.available) {
    banner.push(
      `no sandbox for computers: ${sandbox.reason}. The owner's commands and desktops run on the host; other organizations get neither.`,
    );
  }
  if (benchtop.firstKey) {
    banner.push(
      `\nA key for organization "local" was created; it is shown only this once:\n`,
      `  export LIGHTCONE_BASE_URL=${url}`,
      `  export TZAFON_API_KEY=${benchtop.firstKey}\n`,
    );
  }
  // One write: a program reading the banner through a pipe gets it whole, in one piece.
  process.stdout.write(`${banner.join('\n')}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    // conf's atomic writer (when-exit) re-raises the signal once after its own cleanup, so a
    // repeat is expected and ignored; a hung close is cut off by the deadline instead.
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing every computer`);
    closeWithin(
      (onStep) => benchtop.close(onStep),
      (code) => process.exit(code),
      (message) => console.error(`benchtop: ${message}`),
    );
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop(signal));
}

function keys(args: string[], org: string | undefined): void {
  const store = new KeyStore(defaultDataDir());
  const [action, id] = args;
  if (action === 'create') {
    // The owner at the machine is held to neither limits.keys_per_org nor the throttle of
    // POST /keys (they are what a key could do remotely), but is told when an organization
    // goes over the cap, since its own keys then cannot create more.
    const { key, info } = store.create(org ?? 'local');
    console.log(
      `created ${info.id} for organization "${info.org}"; the key is shown only this once:\n${key}`,
    );
    const cap = keysPerOrg();
    const live = store.liveCount(info.org);
    if (cap !== undefined && live > cap) {
      console.log(
        `note: organization "${info.org}" now has ${live} keys that are not revoked, over limits.keys_per_org (${cap}); its keys cannot create more with POST /keys until some are revoked`,
      );
    }
  } else if (action === 'list') {
    for (const key of store.list()) {
      console.log(
        `${key.id}  ${key.org}  ${key.prefix}…  created ${key.created_at}${key.revoked_at ? `  revoked ${key.revoked_at}` : ''}`,
      );
    }
  } else if (action === 'revoke' && id) {
    if (!store.revoke(id)) throw new ConfigError(`no key ${id}; see \`benchtop keys list\``);
    console.log(`revoked ${id}`);
  } else {
    throw new ConfigError(USAGE);
  }
}

/** limits.keys_per_org as Benchtop would start with it; undefined when the settings are broken. */
function keysPerOrg(): number | undefined {
  try {
    return resolveSettings({ stored: readStoredSettings(defaultDataDir()) }).limits.keys_per_org;
  } catch {
    return undefined;
  }
}

/** Sees and lifts the running server's IP blocks through files in the data dir. */
async function ipBlocks(args: string[], all: boolean | undefined): Promise<void> {
  const dataDir = defaultDataDir();
  const [action = 'list', ip] = args;
  if (action === 'list') {
    const blocks = readBlocks(dataDir);
    if (blocks.length === 0) console.log('no address is blocked');
    for (const block of blocks) {
      console.log(
        `${block.ip}  ${block.failures} failed authentications  blocked until ${block.until}`,
      );
    }
    return;
  }
  if (action !== 'lift' || (!ip && !all)) throw new ConfigError(USAGE);
  const liftFile = join(dataDir, LIFT_FILE);
  writeAtomically(liftFile, { ips: all ? ['*'] : [ip] });
  for (let waited = 0; waited < 3000 && existsSync(liftFile); waited += 100) await sleep(100);
  if (existsSync(liftFile)) {
    rmSync(liftFile, { force: true });
    throw new ConfigError('no running Benchtop took the request (blocks end when Benchtop stops)');
  }
  console.log(all ? 'lifted every block' : `lifted the block of ${ip}`);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      org: { type: 'string' },
      help: { type: 'boolean' },
      all: { type: 'boolean' },
    },
  });
  const [command = 'serve', ...rest] = positionals;
  if (values.help) return console.log(USAGE);
  preparePrivateDataDir(defaultDataDir());
  if (command === 'serve') return serve(values);
  if (command === 'mcp') {
    const [{ serveMcp }, { builtAppPaths }] = await Promise.all([
      import('./mcp-stdio.js'),
      import('./start-benchtop.js'),
    ]);
    return serveMcp(builtAppPaths(import.meta.dirname));
  }
  if (command === 'keys') return keys(rest, values.org);
  if (command === 'ip-blocks') return ipBlocks(rest, values.all);
  throw new ConfigError(`unknown command "${command}"\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
  console.error(
    `benchtop: ${known ? (error as Error).message : ((error as Error)?.stack ?? String(error))}`,
  );
  process.exit(2);
});
