/**
 * A round trip through the display's window manager, so that input sent next follows what the
 * window manager made of the input before it.
 *
 * A click-to-focus window manager (openbox here) holds a button grab on every window in
 * synchronous mode: the X server freezes the pointer at the press until the window manager has
 * focused the window and replayed the press to it. Keys from any client are not frozen. So a
 * click on a window followed at once by typing sends the first keys (or all of them) to the
 * window that had the focus before, or to a page before the click reached its text field,
 * whenever the window manager is a few milliseconds late to run, as on a loaded machine.
 *
 * The window manager reads its events in order: the press it grabbed comes before any message
 * sent to it afterwards. `_NET_REQUEST_FRAME_EXTENTS` is a message every EWMH window manager
 * answers, without side effects, by setting `_NET_FRAME_EXTENTS` on the window it names (here an
 * unmapped window of our own): once that property changes, the press has been dealt with.
 *
 * This talks X11 through node-x11 on a connection of its own. Callers first make sure the X server
 * has processed their input (a round trip on the connection that sent it), so the press reaches
 * the window manager before this message does.
 */
import { connectX11, type X11Event } from './x11-connection.js';

/** How long one round trip may take before the input is answered anyway. */
const ROUND_TRIP_TIMEOUT_MS = 2000;
/** How often `started` asks again while the window manager is not yet listening. */
const PROBE_INTERVAL_MS = 50;

export type WindowManagerSync = {
  /** Resolves once the window manager has handled every event it was sent before the call. */
  roundTrip(): Promise<void>;
  /**
   * Resolves true once the window manager answers at all, false if it has not within `timeoutMs`.
   * Openbox answers only from its event loop, which it enters after taking the windows already on
   * the display and leaving the focus on none of them: a click sent before then may focus nothing.
   */
  started(timeoutMs: number): Promise<boolean>;
};

/**
 * Connects to `display` (XAUTHORITY from the environment). Without a window manager that answers
 * (none running, or one without EWMH), round trips stop being attempted after the first one
 * times out: there is then no grab to wait for.
 */
export async function connectWindowManagerSync(display: string): Promise<WindowManagerSync> {
  const { client, root, eventMask } = await connectX11(display);
  const atom = (name: string) =>
    new Promise<number>((resolve, reject) =>
      client.InternAtom(false, name, (error, value) => (error ? reject(error) : resolve(value))),
    );
  const [request, extents] = await Promise.all([
    atom('_NET_REQUEST_FRAME_EXTENTS'),
    atom('_NET_FRAME_EXTENTS'),
  ]);
  const window = client.AllocID();
  // An InputOnly window, never mapped: nobody sees it, and the window manager never manages it.
  client.CreateWindow(window, root, 0, 0, 1, 1, 0, 0, 2, 0, {
    eventMask: eventMask.PropertyChange,
  });

  const waiting: (() => void)[] = [];
  // Answers still owed to round trips that timed out: they arrive first, and answer nobody.
  let late = 0;
  client.on('event', (event) => {
    if (event.name !== 'PropertyNotify' || event.wid !== window || event.atom !== extents) return;
    if (late > 0) late--;
    else waiting.shift()?.();
  });
  // A connection that breaks (the display ended) only ends the waiting: input was sent anyway.
  client.on('error', () => waiting.splice(0).forEach((done) => done()));

  let answered = false;
  let giveUp = false;
  return {
    async started(timeoutMs) {
      // A window of its own: a request sent before the window manager listens is lost, never
      // answered, and would otherwise be counted against the round trips' answers.
      const probe = client.AllocID();
      client.CreateWindow(probe, root, 0, 0, 1, 1, 0, 0, 2, 0, {
        eventMask: eventMask.PropertyChange,
      });
      const ok = await new Promise<boolean>((resolve) => {
        const ask = () => client.SendClientMessage(root, probe, request, 32, [0, 0, 0, 0, 0]);
        const asking = setInterval(ask, PROBE_INTERVAL_MS);
        const finish = (result: boolean) => {
          clearInterval(asking);
          clearTimeout(timer);
          client.removeListener('event', onEvent);
          resolve(result);
        };
        const timer = setTimeout(() => finish(false), timeoutMs);
        const onEvent = (event: X11Event) => {
          if (event.name === 'PropertyNotify' && event.wid === probe && event.atom === extents)
            finish(true);
        };
        client.on('event', onEvent);
        ask();
      });
      client.DestroyWindow(probe);
      if (ok) answered = true;
      else giveUp = true;
      return ok;
    },
    async roundTrip() {
      if (giveUp) return;
      const timedOut = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(done), 1);
          late++;
          resolve(true);
        }, ROUND_TRIP_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          resolve(false);
        };
        waiting.push(done);
        client.SendClientMessage(root, window, request, 32, [0, 0, 0, 0, 0]);
      });
      if (!timedOut) answered = true;
      else if (!answered) giveUp = true;
    },
  };
}
