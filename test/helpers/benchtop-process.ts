import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { descendants, isAlive } from './processes.js';
import { eventually } from './test-server.js';

/** The `benchtop` command as a person runs it (`node bin/benchtop.js …`). */
export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'benchtop.js');

/** `benchtop serve` as its own process, the way a person runs it. */
export type BenchtopProcess = {
  child: ChildProcess;
  url: string;
  /** Every line it printed so far. */
  output: string[];
  /** What it wrote to stderr so far, in chunks as they came. */
  errors: string[];
  /** The key its `/ui/` link carries: valid for organization `local` while this process runs. */
  windowKey: string;
  /** The stored key printed on a first start (`export TZAFON_API_KEY=…`), if this was one. */
  firstKey: string | undefined;
  request<T = any>(method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>>;
  /** Resolves with the exit code (null when killed by a signal) once the process has ended. */
  exited(): Promise<number | null>;
};

export type Answer<T = any> = { status: number; body: T; text: string };

/**
 * The environment of a `benchtop` process a test starts: this one's without Benchtop's own
 * variables and key (the developer's settings must not reach the test), one warm browser and no
 * spare desktop (a display started with every process, which few tests ask for), then `extra`.
 */
export function benchtopEnv(extra: Record<string, string> = {}): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      !entry[0].startsWith('BENCHTOP_') && entry[0] !== 'TZAFON_API_KEY' && entry[1] !== undefined,
  );
  return {
    ...Object.fromEntries(inherited),
    BENCHTOP_BROWSER_WARM_POOL: '1',
    BENCHTOP_DESKTOP_WARM_POOL: '0',
    ...extra,
  };
}

/** Starts `node bin/benchtop.js serve --port 0` on a data dir; resolves once it listens. */
export function serveProcess(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<BenchtopProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    onBanner(child, output, (url, windowKey) => {
      const firstKey = output
        .find((printed) => printed.includes('export TZAFON_API_KEY='))
        ?.split('=')[1];
      resolve(started(child, url, output, stderr, windowKey, firstKey, exit));
    });
    void exit.then((code) =>
      reject(new Error(`benchtop exited with ${code}: ${[...output, ...stderr].join('\n')}`)),
    );
  });
}

/**
 * Collects what `benchtop serve` prints into `output` and calls back once its start banner
 * (listening on…, the window's link, a first key) is in: the CLI writes the banner in one write,
 * so it arrives in one piece and the callback sees all of it.
 */
export function onBanner(
  child: ChildProcess,
  output: string[],
  ready: (url: string, windowKey: string) => void,
): void {
  let partial = '';
  let done = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    output.push(...lines);
    if (done) return;
    const url = lines
      .map((line) => /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1])
      .find(Boolean);
    const windowKey = lines
      .map((line) => /^the window: .*#key=(sk_\S+)$/.exec(line)?.[1])
      .find(Boolean);
    if (url && windowKey) {
      done = true;
      ready(url, windowKey);
    }
  });
}

function started(
  child: ChildProcess,
  url: string,
  output: string[],
  errors: string[],
  windowKey: string,
  firstKey: string | undefined,
  exit: Promise<number | null>,
): BenchtopProcess {
  return {
    child,
    url,
    output,
    errors,
    windowKey,
    firstKey,
    async request(method, path, body, key = windowKey) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON: callers look at text.
      }
      return { status: response.status, body: parsed as any, text };
    },
    exited: () => exit,
  };
}

/**
 * Kills what a test left: the process and every descendant it had (also ones that outlived it,
 * by the pids seen while it ran). Returns the pids that were still alive.
 */
export async function killAll(pids: number[]): Promise<number[]> {
  const alive = pids.filter(isAlive);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  await eventually(() => alive.every((pid) => !isAlive(pid)), 5000).catch(() => {});
  return alive;
}

/** The process and its descendants now. */
export function tree(pid: number): number[] {
  return [pid, ...descendants(pid)];
}
