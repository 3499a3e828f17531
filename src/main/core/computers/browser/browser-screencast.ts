import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { Pacer } from '../pacer.js';
import { keepOutOfActions, type Activity } from '../activity.js';
import { jpegOfPng, jpegSize, pngSize, type CaptureOptions, type FrameSink } from '../operator.js';
import { StallWatch } from './stall-watch.js';

/** How often the capture checks whether another tab became the main one. */
const FOLLOW_MAIN_MS = 250;
/** Between actions: a page that sent no frame for this long is still, and its screencast stops. */
const STILL_MS = 2000;
/** A still page is looked at again this often, for what the page's hints cannot tell (a canvas). */
const PROBE_MS = 5000;
/** How often the capture checks for a page gone still, due for a look, or a stalled screencast. */
const TICK_MS = 250;
/**
 * A still page's look: one small PNG frame (lossless, so the same pixels give the same bytes),
 * about a quarter of what a full frame costs Chromium (measured: 15 ms of CPU against 60).
 */
const PROBE = { format: 'png', maxWidth: 320, maxHeight: 320, everyNthFrame: 1 } as const;
/** How a PNG's base64 begins (its signature). */
const PNG_BASE64 = 'iVBOR';

/** The world and binding by which a page tells the capture that it changed (see HINTS). */
const WORLD = '__benchtop_screen';
const BINDING = '__benchtopScreenChanged';

/**
 * Runs in an isolated world of the page (the page's own scripts see none of it): tells the
 * capture, at most every 100 ms, that the page may look different — its DOM changed, it
 * scrolled, an animation, transition or media started, or it was resized. Once the capture is
 * gone (its binding with it), it stops watching.
 */
const HINTS = `(() => {
  const tell = globalThis.${BINDING};
  if (typeof tell !== 'function' || globalThis.${BINDING}Watching) return;
  globalThis.${BINDING}Watching = true;
  const types = ['scroll', 'animationstart', 'transitionstart', 'play', 'resize'];
  let queued = false;
  const stop = () => {
    observer.disconnect();
    for (const type of types) removeEventListener(type, notify, true);
  };
  const notify = () => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      try { tell(''); } catch { stop(); }
    }, 100);
  };
  const observer = new MutationObserver(notify);
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  for (const type of types) addEventListener(type, notify, true);
})()`;

type Target = { page: Page; tabId: string };

/**
 * A CDP screencast of a browser computer's main tab: Chromium sends a JPEG whenever the page
 * changes, each acknowledged so the next one comes. When another tab becomes main, the capture
 * moves to it.
 *
 * With options.betweenActions (the recorder alone), the screencast stops while the computer
 * performs an action and starts again once it has been free of actions for QUIET_MS: a start
 * sends the screen as it is, so each action's outcome is captured once, after it, instead of
 * Chromium encoding a frame for every key typed (that doubled what typing cost). A long action,
 * or a stream of actions with no pause, is captured all the same (see keepOutOfActions). A
 * screenshot of the main tab is itself such a capture: it becomes a frame as the PNG it is
 * (nothing to encode), so an agent that looks before each action needs no start between its
 * steps.
 *
 * Between actions it also stops on a page that has been still for STILL_MS: a running
 * screencast keeps the page's compositor producing frames for it even when nothing changes
 * (ten still pages: 0.8 % of a core without, 9.3 % with). It starts again as soon as the page
 * hints at a change (HINTS) or an action comes, or when a look at the page every PROBE_MS (a
 * small frame, compared with the one taken as it became still) finds it changed in a way no
 * hint tells of (a canvas, a video, a frame of another site).
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
  /** Whether the screencast may run now (false while it keeps out of an action's way). */
  let running = true;
  /** Between actions: the page sent no frame for STILL_MS, and no hint or action came since. */
  let still = false;
  /** A still page is due for a look (PROBE). */
  let probing = false;
  /** What the current session's screencast runs as, if it runs. */
  let casting: 'full' | 'probe' | undefined;
  /** The still page's look when it became still, to compare later looks with. */
  let stillLook: string | undefined;
  let lastFrameAt = Date.now();
  let lastProbeAt = 0;
  let stall = new StallWatch(Date.now());
  const watchStill = options.betweenActions === true && activity !== undefined;

  const screencast = (session: CDPSession, as: 'full' | 'probe') =>
    session.send(
      'Page.startScreencast',
      as === 'full'
        ? {
            format: 'jpeg',
            quality: options.quality,
            ...(options.maxWidth && { maxWidth: options.maxWidth, maxHeight: 4320 }),
            everyNthFrame: 1,
          }
        : PROBE,
    );
  /** Starts, changes or stops the current screencast to match running, still and probing. */
  const sync = () => {
    const session = current?.session;
    if (!session) return;
    const wanted = !running ? undefined : !still ? 'full' : probing ? 'probe' : undefined;
    if (wanted === casting) return;
    // Sent in order on one session: a change is a stop, then a start with the new parameters.
    if (casting) session.send('Page.stopScreencast').catch(() => {});
    casting = wanted;
    if (wanted === 'full') stall.started(Date.now());
    if (wanted) screencast(session, wanted).catch(() => {});
  };
  /** The page moved on (an action, a hint, another tab): captured at once, and not still. */
  const awake = () => {
    still = false;
    probing = false;
    stillLook = undefined;
    lastFrameAt = Date.now();
    sync();
  };
  /**
   * The page was just looked at (a screenshot became its frame): still as of that look, so no
   * screencast runs until the page hints at a change, an action comes, or a probe finds one.
   * Starting one would make Chromium encode a full frame of what the screenshot showed (an
   * agent waiting on its model paid that at every step).
   */
  const rest = () => {
    still = true;
    probing = false;
    stillLook = undefined;
    lastProbeAt = Date.now();
    sync();
  };
  /** A still page's look: the first one is kept; one that differs from it wakes the capture. */
  const looked = (data: string) => {
    probing = false;
    if (stillLook === undefined || data === stillLook) {
      stillLook ??= data;
      sync();
    } else {
      awake();
    }
  };
  const stopCurrent = async () => {
    const previous = current;
    current = undefined;
    casting = undefined;
    if (!previous) return;
    previous.target.page.off('domcontentloaded', renew);
    await previous.session.send('Page.stopScreencast').catch(() => {});
    await previous.session.detach().catch(() => {});
  };
  /**
   * A screencast started as the tab's document was being replaced sometimes sends its first frame
   * and then none (Chromium; about 1 start in 3 right before a setContent, 1 in 20 before a
   * navigation, here): a person who opened the live view as the agent navigated saw a still
   * picture. It is started again once each new document of the tab has loaded, and whenever it
   * stalled all the same (StallWatch).
   */
  const renew = () => {
    const session = current?.session;
    if (!session || casting !== 'full') return;
    stall.started(Date.now());
    session.send('Page.stopScreencast').catch(() => {});
    screencast(session, 'full').catch(() => {});
  };
  const startOn = async (target: Target) => {
    const session = await context().newCDPSession(target.page);
    const started = { target, session };
    current = started;
    target.page.on('domcontentloaded', renew);
    still = false;
    probing = false;
    stillLook = undefined;
    lastFrameAt = Date.now();
    stall = new StallWatch(lastFrameAt);
    session.on('Page.screencastFrame', ({ data, sessionId }) => {
      void session.send('Page.screencastFrameAck', { sessionId }).catch(() => {});
      if (stopped || current?.session !== session) return;
      // A probe's frames are PNG, the capture's JPEG: a frame of one still in flight when the
      // screencast changed is told apart by its format.
      if (data.startsWith(PNG_BASE64)) {
        if (still && probing) looked(data);
        return;
      }
      lastFrameAt = Date.now();
      stall.frame(lastFrameAt);
      // Newer than any screenshot taken as a frame, or waiting to be.
      lastShown = undefined;
      shown.drop();
      const jpeg = Buffer.from(data, 'base64');
      onFrame({ jpeg, ...jpegSize(jpeg), tabId: target.tabId });
    });
    try {
      if (running) {
        casting = 'full';
        await screencast(session, 'full');
      }
      // After the start: the first frame does not wait for them.
      await hintsFrom(session, () => {
        if (current !== started) return;
        if (still) awake();
        else if (casting === 'full') stall.hint(Date.now());
      }).catch(() => {});
    } catch (error) {
      // Refused while the page was being replaced (a capture started with the computer races its
      // first navigation): forgotten, so the next look at the main tab starts it again.
      target.page.off('domcontentloaded', renew);
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

  /**
   * Screenshots of the main tab taken between actions become frames as they are (PNG: only the
   * recorder gets these, and its video converts them if it is ever encoded), at most
   * options.fps a second, the latest first. One that shows what the last frame showed adds
   * nothing to the video. A capture asked for narrower frames gets them encoded here.
   */
  let lastShown: Buffer | undefined;
  const shown = new Pacer(1000 / options.fps, ({ png, at }: { png: Buffer; at: number }) => {
    const tabId = current?.target.tabId;
    if (stopped || tabId === undefined) return;
    lastFrameAt = at;
    if (lastShown?.equals(png)) return;
    lastShown = png;
    const size = pngSize(png);
    if (!options.maxWidth || size.width <= options.maxWidth) {
      onFrame({ png, ...size, tabId, capturedAt: at });
      return;
    }
    void jpegOfPng(png, options).then(
      (jpeg) => {
        if (!stopped) onFrame({ jpeg, ...jpegSize(jpeg), tabId, capturedAt: at });
      },
      () => {},
    );
  });
  const unsubscribe = watchStill
    ? keepOutOfActions(
        activity,
        (run, afterLook) => {
          if (run === running || stopped) return;
          running = run;
          if (!run) sync();
          else if (afterLook) rest();
          else awake();
        },
        (png) => shown.push({ png, at: Date.now() }),
      )
    : () => {};

  await follow();
  const timer = setInterval(() => void follow(), FOLLOW_MAIN_MS);
  timer.unref();
  const ticker = setInterval(() => {
    const now = Date.now();
    if (casting === 'full' && stall.stalled(now)) renew();
    if (!watchStill || !running || !current || probing) return;
    // Still from now: its first look is taken at once, to compare the later ones with.
    const due = still ? now - lastProbeAt >= PROBE_MS : now - lastFrameAt >= STILL_MS;
    if (!due) return;
    still = true;
    probing = true;
    lastProbeAt = now;
    sync();
  }, TICK_MS);
  ticker.unref();
  return async () => {
    stopped = true;
    unsubscribe();
    shown.stop();
    clearInterval(timer);
    clearInterval(ticker);
    await stopCurrent();
  };
}

/**
 * Has the page call `changed` when it may look different (HINTS), in this document and the ones
 * it navigates to. Hints wake a still capture sooner, and tell a running one of changes its
 * frames must show; a page that refuses them (closing, being replaced) is still probed.
 */
async function hintsFrom(session: CDPSession, changed: () => void): Promise<void> {
  session.on('Runtime.bindingCalled', ({ name }) => {
    if (name === BINDING) changed();
  });
  await Promise.all([session.send('Page.enable'), session.send('Runtime.enable')]);
  await session.send('Runtime.addBinding', { name: BINDING, executionContextName: WORLD });
  await session.send('Page.addScriptToEvaluateOnNewDocument', {
    source: HINTS,
    worldName: WORLD,
    runImmediately: true,
  });
  const { frameTree } = await session.send('Page.getFrameTree');
  const { executionContextId } = await session.send('Page.createIsolatedWorld', {
    frameId: frameTree.frame.id,
    worldName: WORLD,
  });
  await session.send('Runtime.evaluate', { expression: HINTS, contextId: executionContextId });
}
