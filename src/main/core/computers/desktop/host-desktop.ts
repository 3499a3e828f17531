import { invalidRequest, unavailable } from '../../errors.js';
import { launch, type Launched } from '../../runtime/process-supervisor.js';
import { DesktopOperator, type DesktopBrowserSetup } from './desktop-operator.js';
import { WorkerClient, type WorkerEntry } from './worker-client.js';
import type { XDisplay } from './x-display.js';

/**
 * Host mode: the computer IS the user's screen (macOS, Windows, or a Linux session's DISPLAY).
 * Nothing is started on it but the worker, and ending the computer ends only what Benchtop
 * launched there (a browser opened by navigate), never the user's session.
 */
export async function startHostDesktop(
  options: DesktopBrowserSetup & {
    workspace: string;
    onCrash: () => void;
    workerEntry: WorkerEntry;
  },
): Promise<{
  operator: DesktopOperator;
  env: Record<string, string>;
  width: number;
  height: number;
}> {
  const name = process.env.DISPLAY ?? '';
  if (process.platform === 'linux' && !name) {
    throw invalidRequest(
      'host_display needs a graphical session: DISPLAY is not set for Benchtop',
      'host_display',
    );
  }
  const displayEnv: Record<string, string> = name ? { DISPLAY: name } : {};
  const worker = await WorkerClient.start(displayEnv, options.workerEntry);
  const { width, height } = await worker.request({ op: 'size' });
  const launched: Launched[] = [];
  const display: XDisplay = {
    name,
    env: displayEnv,
    socket: '',
    width,
    height,
    pid: process.pid,
    async launch(command, args, launchOptions = {}) {
      const child = await launch(command, args, {
        cwd: launchOptions.cwd,
        env: { ...process.env, ...launchOptions.env },
        stdio: 'ignore',
      }).catch((error: Error) => {
        throw unavailable(`${command} could not start: ${error.message}`);
      });
      launched.push(child);
      return child;
    },
    onExit: () => {},
    close() {
      for (const child of launched) if (child.running) child.kill();
      return Promise.resolve();
    },
  };
  const operator = new DesktopOperator({
    display,
    worker,
    workspace: options.workspace,
    browser: options.browser,
    maxTabs: options.maxTabs,
    report: options.report,
    downloadsDir: options.downloadsDir,
    typeWithNut: process.platform !== 'linux',
  });
  operator.onCrash(options.onCrash);
  return { operator, env: name ? { DISPLAY: name } : {}, width, height };
}
