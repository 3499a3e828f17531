import { closeWithin, SHUTDOWN_DEADLINE_MS, type StepwiseClose } from '../core/runtime/shutdown.js';
import type { Preventable } from './navigation-guard.js';

/** The part of Electron's `app` that quitting uses. */
export type QuitApp = {
  on(event: 'before-quit', listener: (event: Preventable) => void): unknown;
  quit(): void;
  exit(code?: number): void;
};

export type QuitState = 'running' | 'closing' | 'closed';

/**
 * Quitting ends every computer first: the first quit is held back until `close()` settles, then
 * quits for real. Quits in between (a second Cmd+Q, the tray's Quit, a signal) only wait for the
 * same close. A close that hangs past the deadline, or fails, exits with status 1 rather than
 * leaving the app half alive.
 */
export function closeOnQuit(
  app: QuitApp,
  close: StepwiseClose,
  options: { deadlineMs?: number; log?: (line: string) => void; onClosing?: () => void } = {},
): { state(): QuitState } {
  const deadlineMs = options.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  const log = options.log ?? ((line: string) => console.error(line));
  let state: QuitState = 'running';
  const finish = (code: number) => {
    state = 'closed';
    if (code === 0) app.quit();
    else app.exit(code);
  };
  app.on('before-quit', (event) => {
    if (state === 'closed') return;
    event.preventDefault();
    if (state === 'closing') return;
    state = 'closing';
    options.onClosing?.();
    closeWithin(close, finish, (message) => log(`benchtop: ${message}`), deadlineMs);
  });
  return { state: () => state };
}
