import { spawn, type ChildProcess } from 'node:child_process';
import { invalidRequest } from '../../errors.js';
import { DesktopOperator, type DesktopBrowserSetup } from './desktop-operator.js';
import { WorkerClient } from './worker-client.js';
import type { XDisplay } from './x-display.js';

/**
 * Host mode: the computer IS the user's screen (macOS, Windows, or a Linux session's DISPLAY).
 * Nothing is started on it but the worker, and ending the computer ends only what Benchtop
 * launched there (a browser opened by navigate), never the user's session.
 */
export async function startHostDesktop(
  options: DesktopBrowserSetup & { workspace: string; onCrash: () => void },
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
  const worker = await WorkerClient.start(displayEnv);
  const { width, height } = await worker.request<{ width: number; height: number }>({ op: 'size' });
  const launched: ChildProcess[] = [];
  const display: XDisplay = {
    name,
    env: displayEnv,
    socket: '',
    width,
    height,
    pid: process.pid,
    launch(command, args, launchOptions = {}) {
      const child = spawn(command, args, {
        cwd: launchOptions.cwd,
        env: { ...process.env, ...launchOptions.env },
        detached: true,
        stdio: 'ignore',
      });
      child.on('error', () => {});
      launched.push(child);
      return child;
    },
    onExit: () => {},
    close() {
      for (const child of launched) {
        try {
          if (child.pid !== undefined && child.exitCode === null)
            process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
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
    typeWithNut: process.platform !== 'linux',
  });
  worker.onExit(() => {
    if (!operator.closing) options.onCrash();
  });
  return { operator, env: name ? { DISPLAY: name } : {}, width, height };
}
