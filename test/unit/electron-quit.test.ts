import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBenchtop } from '../../src/main/start-benchtop.js';
import { sourceAppPaths } from '../helpers/app-paths.js';
import { closeOnQuit } from '../../src/main/window/quit-handling.js';
import { descendants, isAlive, notSpawnRelay } from '../helpers/processes.js';

/** Electron's app as far as quitting goes: quit() emits a preventable before-quit. */
class FakeApp extends EventEmitter {
  quitAttempts = 0;
  didQuit = false;
  exitCode: number | undefined;
  quit(): void {
    this.quitAttempts++;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.didQuit = true;
  }
  exit(code = 0): void {
    this.exitCode = code;
  }
  get ended(): boolean {
    return this.didQuit || this.exitCode !== undefined;
  }
}

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('quitting the app', () => {
  it('waits for every computer to close before quitting', async () => {
    const app = new FakeApp();
    const closing = deferred();
    let closes = 0;
    closeOnQuit(app, () => (closes++, closing.promise), { log: () => {} });
    app.quit();
    await tick();
    expect(closes).toBe(1);
    expect(app.ended).toBe(false);
    closing.resolve();
    await tick();
    expect(app.didQuit).toBe(true);
    expect(app.exitCode).toBeUndefined();
  });

  it('a second quit while closing waits for the same close', async () => {
    const app = new FakeApp();
    const closing = deferred();
    let closes = 0;
    const quit = closeOnQuit(app, () => (closes++, closing.promise), { log: () => {} });
    app.quit();
    app.quit();
    await tick();
    app.quit();
    expect(closes).toBe(1);
    expect(quit.state()).toBe('closing');
    expect(app.ended).toBe(false);
    closing.resolve();
    await tick();
    expect(closes).toBe(1);
    expect(app.didQuit).toBe(true);
    expect(quit.state()).toBe('closed');
  });

  it('gives up on a hung close at the deadline, naming the part it hung on, with status 1', async () => {
    const app = new FakeApp();
    const lines: string[] = [];
    const hangsAtBrowsers = (onStep: (part: string) => void) => {
      onStep('computers');
      onStep('browsers');
      return new Promise<void>(() => {});
    };
    closeOnQuit(app, hangsAtBrowsers, {
      deadlineMs: 50,
      log: (line) => lines.push(line),
    });
    app.quit();
    await tick();
    expect(app.ended).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(app.exitCode).toBe(1);
    expect(lines.join('\n')).toMatch(/closing took longer than 0.05 s \(still closing browsers\)/);
  });

  it('a failed close is reported and exits with status 1', async () => {
    const app = new FakeApp();
    const lines: string[] = [];
    closeOnQuit(app, () => Promise.reject(new Error('chromium would not die')), {
      log: (line) => lines.push(line),
    });
    app.quit();
    await tick();
    expect(app.exitCode).toBe(1);
    expect(lines.join('\n')).toMatch(/chromium would not die/);
  });

  it('hides the windows at once, so quitting looks immediate while computers close', async () => {
    const app = new FakeApp();
    const closing = deferred();
    let hidden = 0;
    closeOnQuit(app, () => closing.promise, { onClosing: () => hidden++, log: () => {} });
    app.quit();
    app.quit();
    expect(hidden).toBe(1);
    closing.resolve();
    await tick();
  });

  it('ends a real Benchtop: its server stops answering and its Chromium exits', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-quit-'));
    const windowKey = `sk_${'q'.repeat(32)}`;
    const benchtop = await startBenchtop({
      paths: sourceAppPaths(),
      dataDir,
      env: {},
      windowKey,
      flags: { server: { port: 0 }, browser: { warm_pool: 0 }, desktop: { warm_pool: 0 } },
      log: () => {},
    });
    try {
      const { url } = benchtop.server;
      const created = await fetch(`${url}/computers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${windowKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'browser' }),
      });
      expect(created.status).toBe(200);
      const chromium = descendants(process.pid).filter(notSpawnRelay);
      expect(chromium.length).toBeGreaterThan(0);

      const app = new FakeApp();
      const order: string[] = [];
      closeOnQuit(app, () => benchtop.close().then(() => void order.push('closed')));
      app.on('before-quit', () => order.push('before-quit'));
      app.quit();
      await expect.poll(() => app.didQuit, { timeout: 15_000 }).toBe(true);
      // Held back once, closed, then let through.
      expect(order).toEqual(['before-quit', 'closed', 'before-quit']);
      await expect(fetch(`${url}/health`)).rejects.toThrow();
      expect(chromium.filter(isAlive)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
