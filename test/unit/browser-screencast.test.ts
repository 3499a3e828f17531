import { EventEmitter } from 'node:events';
import sharp from 'sharp';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startBrowserCapture } from '../../src/main/core/computers/browser/browser-screencast.js';

let jpeg: string;
beforeAll(async () => {
  const image = sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } });
  jpeg = (await image.jpeg().toBuffer()).toString('base64');
});
beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A tab's CDP session as the capture uses it: answers what it asks, records what it sends. */
class FakeSession extends EventEmitter {
  sent: string[] = [];
  send(method: string): Promise<unknown> {
    this.sent.push(method);
    if (method === 'Page.getFrameTree')
      return Promise.resolve({ frameTree: { frame: { id: 'F' } } });
    if (method === 'Page.createIsolatedWorld') return Promise.resolve({ executionContextId: 1 });
    return Promise.resolve({});
  }
  detach(): Promise<void> {
    return Promise.resolve();
  }
  /** Chromium sends a frame. */
  frame(): void {
    this.emit('Page.screencastFrame', { data: jpeg, sessionId: 1 });
  }
  /** The page tells the capture it changed. */
  hint(): void {
    this.emit('Runtime.bindingCalled', { name: '__benchtopScreenChanged' });
  }
  starts(): number {
    return this.sent.filter((method) => method === 'Page.startScreencast').length;
  }
}

/** A live view's capture (a person watching) of one tab. */
async function liveCapture() {
  const session = new FakeSession();
  const page = new EventEmitter();
  const context = { newCDPSession: () => Promise.resolve(session) };
  const frames: unknown[] = [];
  const stop = await startBrowserCapture(
    () => context as never,
    () => ({ page: page as never, tabId: 'tab_1' }),
    { fps: 10, quality: 60 },
    (frame) => frames.push(frame),
  );
  return { session, frames, stop };
}

describe('a browser computer’s screencast', () => {
  it('is started again when the page changed and no frame showed it (a stalled screencast)', async () => {
    const { session, frames, stop } = await liveCapture();
    session.frame();
    expect(session.starts()).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    session.hint();
    await vi.advanceTimersByTimeAsync(1500);
    expect(session.starts()).toBe(2);
    expect(session.sent.lastIndexOf('Page.stopScreencast')).toBeLessThan(
      session.sent.lastIndexOf('Page.startScreencast'),
    );
    session.frame();
    expect(frames).toHaveLength(2);
    await stop();
  });

  it('is left alone when a frame showed the change', async () => {
    const { session, stop } = await liveCapture();
    session.frame();
    await vi.advanceTimersByTimeAsync(500);
    session.hint();
    await vi.advanceTimersByTimeAsync(50);
    session.frame();
    await vi.advanceTimersByTimeAsync(5000);
    expect(session.starts()).toBe(1);
    await stop();
  });

  it('is started again less and less often for a page whose changes draw nothing new', async () => {
    const { session, stop } = await liveCapture();
    session.frame();
    // 20 s of a hidden element changing every 100 ms: only each start sends a frame.
    for (let tick = 0; tick < 200; tick++) {
      const before = session.starts();
      await vi.advanceTimersByTimeAsync(100);
      if (session.starts() > before) session.frame();
      session.hint();
    }
    // Waits of 1, 2, 4 and 8 s, against about one start a second without backing off.
    expect(session.starts()).toBe(5);
    await stop();
  });
});
