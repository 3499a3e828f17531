import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DesktopOperator } from '../../src/main/core/computers/desktop/desktop-operator.js';
import type { WorkerClient } from '../../src/main/core/computers/desktop/worker-client.js';
import type { XDisplay } from '../../src/main/core/computers/desktop/x-display.js';
import type { Frame } from '../../src/main/core/computers/operator.js';
import { eventually } from '../helpers/test-server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A desktop's worker that grabs a one-pixel frame at once, never sees the screen change, and
 * holds a screenshot until the test lets it go.
 */
function heldWorker() {
  let release = () => {};
  const screenshotDone = new Promise<void>((resolve) => (release = resolve));
  const worker = {
    request: async (request: { op: string }) => {
      switch (request.op) {
        case 'frame':
          return { jpeg: new Uint8Array([0xff]), width: 1, height: 1, cursor: { x: 0, y: 0 } };
        case 'changes':
          return new Promise(() => {});
        case 'screenshot':
          await screenshotDone;
          return { png: new Uint8Array([1]), width: 1, height: 1 };
        default:
          return {};
      }
    },
    onExit: () => {},
    close: () => {},
  };
  return { worker: worker as unknown as WorkerClient, release };
}

function desktop(worker: WorkerClient): DesktopOperator {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-desktop-capture-'));
  dirs.push(dir);
  const display = { name: ':99', env: {}, width: 1, height: 1 } as unknown as XDisplay;
  return new DesktopOperator({
    display,
    worker,
    workspace: dir,
    downloadsDir: dir,
    maxTabs: () => 5,
  });
}

describe("a desktop's capture for the recorder, which keeps out of actions", () => {
  it('stops when told to while an action runs, without waiting for the action', async () => {
    const { worker, release } = heldWorker();
    const operator = desktop(worker);
    const frames: Frame[] = [];
    const stop = await operator.startCapture(
      { fps: 5, quality: 50, betweenActions: true },
      (frame) => frames.push(frame),
      () => {},
    );
    await eventually(() => frames.length === 1);
    // An action begins while the capture waits for its next grab; then Benchtop closes. The stop
    // used to wait for the action's end, which it no longer heard of: for good.
    const shot = operator.screenshot();
    await stop();
    release();
    expect((await shot).width).toBe(1);
    expect(frames).toHaveLength(1);
  });
});
