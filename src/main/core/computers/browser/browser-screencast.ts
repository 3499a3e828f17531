import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { keepOutOfActions, type Activity } from '../activity.js';
import { jpegSize, type CaptureOptions, type FrameSink } from '../operator.js';

/** How often the capture checks whether another tab became the main one. */
const FOLLOW_MAIN_MS = 250;

type Target = { page: Page; tabId: string };

/**
 * A CDP screencast of a browser computer's main tab: Chromium sends a JPEG whenever the page
 * changes, each acknowledged so the next one comes. When another tab becomes main, the capture
 * moves to it.
 *
 * With options.betweenActions, the screencast stops while the computer performs an action and
 * starts again once it has been free of actions for QUIET_MS: a start sends the screen as it is,
 * so each action's outcome is captured once, after it, instead of Chromium encoding a frame for
 * every key typed (that doubled what typing cost). A long action, or a stream of actions with no
 * pause, is captured all the same (see keepOutOfActions).
 */
export async function startBrowserCapture(
  context: () => BrowserContext,
  mainTab: () => Target | undefined,
  options: CaptureOptions,
  onFrame: FrameSink,
  activity?: Activity,
): Promise<() => Promise<void>> {
  let current: { target: Target; session: CDPSession } | undefined;
  let stopped = false;
  /** Whether the screencast should be running now (false while it keeps out of an action's way). */
  let running = true;

  const screencast = (session: CDPSession) =>
    session.send('Page.startScreencast', {
      format: 'jpeg',
      quality: options.quality,
      ...(options.maxWidth && { maxWidth: options.maxWidth, maxHeight: 4320 }),
      everyNthFrame: 1,
    });
  const stopCurrent = async () => {
    const previous = current;
    current = undefined;
    if (!previous) return;
    await previous.session.send('Page.stopScreencast').catch(() => {});
    await previous.session.detach().catch(() => {});
  };
  const startOn = async (target: Target) => {
    const session = await context().newCDPSession(target.page);
    const started = { target, session };
    current = started;
    session.on('Page.screencastFrame', ({ data, sessionId }) => {
      void session.send('Page.screencastFrameAck', { sessionId }).catch(() => {});
      if (stopped || current?.session !== session) return;
      const jpeg = Buffer.from(data, 'base64');
      onFrame({ jpeg, ...jpegSize(jpeg), tabId: target.tabId });
    });
    try {
      if (running) await screencast(session);
    } catch (error) {
      // Refused while the page was being replaced (a capture started with the computer races its
      // first navigation): forgotten, so the next look at the main tab starts it again.
      if (current === started) current = undefined;
      await session.detach().catch(() => {});
      throw error;
    }
  };
  let following = false;
  const follow = async () => {
    const main = mainTab();
    // One look at a time: a slow start must not be overtaken by the next tick's (two sessions).
    if (following || stopped || !main || main.page === current?.target.page) return;
    following = true;
    try {
      await stopCurrent();
      await startOn(main).catch(() => {});
    } finally {
      following = false;
    }
  };

  const unsubscribe =
    options.betweenActions && activity
      ? keepOutOfActions(activity, (run) => {
          if (run === running || stopped) return;
          running = run;
          const session = current?.session;
          if (!session) return;
          if (run) screencast(session).catch(() => {});
          else session.send('Page.stopScreencast').catch(() => {});
        })
      : () => {};

  await follow();
  const timer = setInterval(() => void follow(), FOLLOW_MAIN_MS);
  timer.unref();
  return async () => {
    stopped = true;
    unsubscribe();
    clearInterval(timer);
    await stopCurrent();
  };
}
