import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeDesktopParts,
  startDesktopParts,
} from '../../src/main/core/computers/desktop/start-desktop.js';
import type { WorkerEntry } from '../../src/main/core/computers/desktop/worker-client.js';
import { runProgram } from '../../src/main/core/runtime/process-supervisor.js';
import { HELPER_TITLE } from '../../src/main/core/runtime/spawn-relay.js';
import { sourceAppPaths } from '../helpers/app-paths.js';
import { commandOf, parentOf } from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

let dir: string;
const path = process.env.PATH;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchtop-desktop-start-'));
  // An openbox that takes a second and a half to start, as on a loaded machine: the terminal's
  // window is up well before the window manager.
  await mkdir(join(dir, 'bin'));
  await writeFile(
    join(dir, 'bin', 'openbox'),
    '#!/bin/sh\nsleep 1.5\nexec /usr/bin/openbox "$@"\n',
  );
  await chmod(join(dir, 'bin', 'openbox'), 0o755);
  process.env.PATH = `${join(dir, 'bin')}:${path}`;
});
afterAll(async () => {
  process.env.PATH = path;
  await rm(dir, { recursive: true, force: true });
});

/** An 800×600 desktop with a terminal in `workspace`, unsandboxed, run by that worker. */
async function startDesktop(workspace: string, workerEntry: WorkerEntry) {
  const privateDir = `${workspace}-private`;
  await mkdir(workspace);
  await mkdir(privateDir);
  return startDesktopParts({
    width: 800,
    height: 600,
    workspace,
    privateDir,
    sandboxed: false,
    network: true,
    terminal: true,
    workerEntry,
  });
}

describe('a desktop starting', () => {
  it('is ready once its window manager has started: the first click focuses the terminal, and typing reaches it', async () => {
    const workspace = join(dir, 'workspace');
    const parts = await startDesktop(workspace, sourceAppPaths().workerEntry);
    try {
      // Its worker and X server were started by the spawn relay's helper, not by this process.
      for (const pid of [parts.worker.pid, parts.display.pid]) {
        expect(commandOf(parentOf(pid))).toMatch(new RegExp(`^${HELPER_TITLE}\\b`));
      }
      await parts.worker.request({ op: 'click', at: { x: 200, y: 150 }, button: 'left', count: 1 });
      const typed = await runProgram(
        'xdotool',
        ['type', '--delay', '0', 'echo typed > typed.txt\n'],
        {
          env: { ...process.env, ...parts.display.env },
          timeoutMs: 10_000,
        },
      );
      expect(typed.code).toBe(0);
      await eventually(
        async () =>
          (await readFile(join(workspace, 'typed.txt'), 'utf8').catch(() => '')) === 'typed\n',
        20_000,
      );
    } finally {
      await closeDesktopParts(parts);
    }
  });

  it('whose worker dies while the rest still starts: the start fails naming the worker, and Benchtop lives on', async () => {
    // A worker that cannot start (nut-js missing, or killed with the process group by a Ctrl-C)
    // exits while the terminal, slow to start here, is still starting.
    await mkdir(join(dir, 'slow-xterm'));
    const xterm = join(dir, 'slow-xterm', 'xterm');
    await writeFile(xterm, '#!/bin/sh\nsleep 2\nexec /usr/bin/xterm "$@"\n');
    await chmod(xterm, 0o755);
    const withSlowOpenbox = process.env.PATH;
    process.env.PATH = `${join(dir, 'slow-xterm')}:${withSlowOpenbox}`;
    const entry = join(dir, 'dead-worker.mjs');
    await writeFile(
      entry,
      "process.stderr.write('no native support here\\n');\nprocess.exit(3);\n",
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const started = startDesktop(join(dir, 'workspace-dead'), { path: entry });
      await expect(started).rejects.toThrow(
        /the desktop worker could not start .*exit 3 no native support here/,
      );
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      process.env.PATH = withSlowOpenbox;
    }
  });
});
