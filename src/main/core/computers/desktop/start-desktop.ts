import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { unavailable } from '../../errors.js';
import { DesktopOperator, type DesktopBrowserSetup } from './desktop-operator.js';
import { WorkerClient } from './worker-client.js';
import { startXDisplay } from './x-display.js';

export type DesktopStart = DesktopBrowserSetup & {
  width: number;
  height: number;
  workspace: string;
  /** Called once if the display or the worker dies on its own (not its browser: it restarts). */
  onCrash: () => void;
};

/** A whole desktop: private display, window manager, a terminal in the workspace, its own worker. */
export async function startDesktop(
  options: DesktopStart,
): Promise<{ operator: DesktopOperator; env: Record<string, string> }> {
  const display = await startXDisplay(options.width, options.height);
  const workerStart = WorkerClient.start(display.name);
  try {
    display.launch('xterm', ['-u8', '-geometry', '100x30+20+20'], {
      cwd: options.workspace,
      // dash keeps keystrokes typed before it starts; bash's readline discards them.
      env: { LC_ALL: 'C.UTF-8', SHELL: '/bin/sh' },
    });
    // Ready means usable: the terminal's window is mapped (it takes the first keystrokes).
    await waitForWindow(display.name, ['--class', 'xterm']);
    const worker = await workerStart;
    const { browser, maxTabs, report } = options;
    const operator = new DesktopOperator({
      display,
      worker,
      workspace: options.workspace,
      browser,
      maxTabs,
      report,
    });
    let crashed = false;
    // The display or the worker dying on its own is a crash; dying because we close it is not.
    const crash = () => {
      if (crashed || operator.closing) return;
      crashed = true;
      options.onCrash();
    };
    display.onExit(crash);
    worker.onExit(crash);
    return { operator, env: { DISPLAY: display.name } };
  } catch (error) {
    workerStart.then(
      (worker) => worker.close(),
      () => {},
    );
    await display.close();
    throw error;
  }
}

const WINDOW_TIMEOUT_MS = 10_000;
const POLL_MS = 100;
const REMAP_AFTER_MS = 300;

/** Polls for a mapped window (xdotool's own --sync was seen to stall for seconds). */
/**
 * Polls for the terminal's mapped window. A map request that arrives while the window manager is
 * still starting can be lost (seen about once in eight starts); after a moment it is asked again.
 */
async function waitForWindow(display: string, search: string[]): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < WINDOW_TIMEOUT_MS) {
    if (await windowExists(display, ['--onlyvisible', ...search])) return;
    if (Date.now() - started > REMAP_AFTER_MS)
      await windowExists(display, [...search, 'windowmap', '%@']);
    await sleep(POLL_MS);
  }
  throw unavailable(
    `the desktop did not become ready within ${WINDOW_TIMEOUT_MS / 1000} s (no ${search.at(-1)} window)`,
  );
}

function windowExists(display: string, search: string[]): Promise<boolean> {
  return new Promise((resolve, reject) => {
    execFile(
      'xdotool',
      ['search', ...search],
      { env: { ...process.env, DISPLAY: display }, timeout: 2000 },
      (error) => {
        if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
          reject(unavailable('desktop computers need xdotool: apt-get install xdotool'));
        } else {
          resolve(!error);
        }
      },
    );
  });
}
