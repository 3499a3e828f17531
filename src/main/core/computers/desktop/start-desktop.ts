import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../../errors.js';
import { runProgram, type Launched } from '../../runtime/process-supervisor.js';
import { ComputerSandbox } from '../../sandbox/computer-sandbox.js';
import { OPENBOX_CONFIG } from './openbox-config.js';
import { DesktopOperator, type DesktopBrowserSetup } from './desktop-operator.js';
import { WorkerClient, type WorkerEntry } from './worker-client.js';
import { sandboxDisplayEnv, startXDisplay, type PrivateXDisplay } from './x-display.js';

/** What a desktop runs before it is anyone's computer, and where. */
export type DesktopPartsStart = {
  width: number;
  height: number;
  workspace: string;
  /** A host folder only this computer uses (its X cookie, its sandbox's /tmp). */
  privateDir: string;
  /** Everything a person or an agent can reach on it runs in the computer's sandbox. */
  sandboxed: boolean;
  /** Whether its sandbox shares the machine's network. */
  network: boolean;
  /** Whether it gets a terminal: only where its organization may run shell commands. */
  terminal: boolean;
  /** Chromium's path, which the sandbox must let it run; undefined when none was found. */
  browser?: string;
  workerEntry: WorkerEntry;
};

/** A desktop's running processes: display, worker, sandbox, window manager, terminal. */
export type DesktopParts = {
  display: PrivateXDisplay;
  worker: WorkerClient;
  sandbox?: ComputerSandbox;
  terminal?: Launched;
};

export type DesktopStart = DesktopPartsStart &
  DesktopBrowserSetup & {
    /** Called once if the display or the worker dies on its own (not its browser: it restarts). */
    onCrash: () => void;
  };

/**
 * A whole desktop: private display, window manager, a terminal in the workspace (where commands
 * are allowed), its own worker. The worker drives the display from outside; the window manager,
 * the terminal and the browser run in the sandbox, where one is asked for.
 */
export async function startDesktop(options: DesktopStart): Promise<StartedDesktop> {
  return desktopOf(await startDesktopParts(options), options);
}

type StartedDesktop = {
  operator: DesktopOperator;
  env: Record<string, string>;
  sandbox?: ComputerSandbox;
};

/** The computer made of a desktop's started parts. */
export function desktopOf(
  parts: DesktopParts,
  options: DesktopBrowserSetup & { workspace: string; onCrash: () => void },
): StartedDesktop {
  const { display, sandbox } = parts;
  const operator = new DesktopOperator({
    ...parts,
    workspace: options.workspace,
    browser: options.browser,
    maxTabs: options.maxTabs,
    report: options.report,
    downloadsDir: options.downloadsDir,
  });
  operator.onCrash(options.onCrash);
  return { operator, env: sandbox ? sandboxDisplayEnv(display.name) : display.env, sandbox };
}

/** Ends what startDesktopParts started (a desktop's operator ends its own parts). */
export async function closeDesktopParts(parts: DesktopParts): Promise<void> {
  parts.worker.close();
  await parts.display.close();
  await parts.sandbox?.close();
}

/** Starts a desktop's processes; it is ready for input when this resolves. */
export async function startDesktopParts(options: DesktopPartsStart): Promise<DesktopParts> {
  const display = await startXDisplay(options.width, options.height, options.privateDir);
  const workerStart = WorkerClient.start(display.env, options.workerEntry);
  // Awaited below, after the rest has started: a worker that fails meanwhile (killed with its
  // process group by a Ctrl-C) must not be an unhandled rejection, which would end Benchtop.
  workerStart.catch(() => {});
  let sandbox: ComputerSandbox | undefined;
  try {
    if (options.sandboxed) {
      sandbox = await ComputerSandbox.start({
        workspace: options.workspace,
        privateDir: options.privateDir,
        xSocket: display.socket,
        program: options.browser,
        network: options.network,
      });
    }
    const config = join(options.privateDir, 'tmp', 'openbox-rc.xml');
    await writeFile(config, OPENBOX_CONFIG, { flag: 'wx' });
    await display.launch(
      'openbox',
      ['--sm-disable', '--config-file', sandbox ? '/tmp/openbox-rc.xml' : config],
      { sandbox },
    );
    let terminal: Launched | undefined;
    if (options.terminal) {
      terminal = await display.launch('xterm', ['-u8', '-geometry', '100x30+20+20'], {
        cwd: options.workspace,
        // dash keeps keystrokes typed before it starts; bash's readline discards them.
        env: { LC_ALL: 'C.UTF-8', SHELL: '/bin/sh' },
        sandbox,
      });
      // Ready means usable: the terminal's window is mapped (it takes the first keystrokes).
      await waitForWindow(display.env, ['--class', 'xterm']);
    }
    const worker = await workerStart;
    // Ready also means the window manager has started. Until then a click focuses nothing, and
    // openbox, once started, leaves the focus on none of the windows it found: typing that
    // follows a first click is lost (seen on a loaded machine, where openbox starts slowly).
    if (!(await worker.request({ op: 'window-manager', waitMs: WINDOW_TIMEOUT_MS })))
      throw unavailable(
        `the desktop did not become ready within ${WINDOW_TIMEOUT_MS / 1000} s (its window manager did not start)`,
      );
    return { display, worker, sandbox, terminal };
  } catch (error) {
    workerStart.then(
      (worker) => worker.close(),
      () => {},
    );
    await display.close();
    await sandbox?.close();
    throw error;
  }
}

const WINDOW_TIMEOUT_MS = 10_000;
const POLL_MS = 100;
const REMAP_AFTER_MS = 300;

/**
 * Polls for the terminal's mapped window. A map request that arrives while the window manager is
 * still starting can be lost (seen about once in eight starts); after a moment it is asked again.
 */
async function waitForWindow(displayEnv: Record<string, string>, search: string[]): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < WINDOW_TIMEOUT_MS) {
    if (await windowExists(displayEnv, ['--onlyvisible', ...search])) return;
    if (Date.now() - started > REMAP_AFTER_MS)
      await windowExists(displayEnv, [...search, 'windowmap', '%@']);
    await sleep(POLL_MS);
  }
  throw unavailable(
    `the desktop did not become ready within ${WINDOW_TIMEOUT_MS / 1000} s (no ${search.at(-1)} window)`,
  );
}

async function windowExists(
  displayEnv: Record<string, string>,
  search: string[],
): Promise<boolean> {
  const found = await runProgram('xdotool', ['search', ...search], {
    env: { ...process.env, ...displayEnv },
    timeoutMs: 2000,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') {
      throw unavailable('desktop computers need xdotool: apt-get install xdotool');
    }
    return undefined;
  });
  return found?.code === 0;
}
