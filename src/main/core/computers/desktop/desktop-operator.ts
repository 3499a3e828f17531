import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PageContext } from '../../../../shared/actions.js';
import { ActionFailure, invalidRequest } from '../../errors.js';
import { runProgram, type Launched } from '../../runtime/process-supervisor.js';
import type { ActionName, ActionOutcome, MouseButton, Point } from '../action.js';
import type { BrowserDownloads, DownloadActivity } from '../browser/browser-downloads.js';
import type { TabActivity } from '../browser/browser-tabs.js';
import type { Key } from '../../keyboard/key-names.js';
import type {
  CaptureOptions,
  CursorSink,
  FrameSink,
  RequestOf,
  Screenshot,
  TabbedOperator,
  TerminalOperator,
  PageLook,
} from '../operator.js';
import { BROWSER_ACTIONS, DesktopBrowser } from './desktop-browser.js';
import type { WorkerButton } from './desktop-protocol.js';
import { nutKeys } from '../../keyboard/nut-keymap.js';
import { UnicodeKeymap } from './unicode-keymap.js';
import type { WorkerClient } from './worker-client.js';
import { Activity, keepOutOfActions } from '../activity.js';
import { sandboxDisplayEnv, type XDisplay } from './x-display.js';
import type { ComputerSandbox } from '../../sandbox/computer-sandbox.js';

/** What a desktop computer performs itself (the runner composes wait, screenshot, debug…). */
export const DESKTOP_CAPABILITIES = new Set([
  'click',
  'mouse_down',
  'mouse_up',
  'move',
  'drag',
  'scroll',
  'type',
  'keypress',
  'key_down',
  'key_up',
  'viewport',
  ...BROWSER_ACTIONS,
] as const satisfies ActionName[]);
type DesktopActionName = typeof DESKTOP_CAPABILITIES extends Set<infer N> ? N : never;

/**
 * How long a capture waits for the screen to change before it asks where the pointer is anyway
 * (input sent through the API wakes it at once; this is for other X clients moving it).
 */
const CURSOR_POLL_MS = 250;
/** X buttons for the side buttons nut-js does not know. */
const SIDE_BUTTONS = { back: '8', forward: '9' } as const;
/** Where the X11 tools come from (Debian/Ubuntu). */
const X11_PACKAGES: Record<string, string> = {
  xdotool: 'apt-get install xdotool',
  xmodmap: 'apt-get install x11-xserver-utils',
};

/** What the desktop's own Chromium (navigate, html, tabs) is started and reported with. */
export type DesktopBrowserSetup = {
  /** Chromium's path; undefined when none was found. */
  browser?: string;
  /** Read at each opening: limits.max_tabs as it is now. */
  maxTabs: () => number;
  /** Tabs opened, closed and switched, navigations and downloads, for the computer's events. */
  report?: (activity: TabActivity | DownloadActivity) => void;
  /** Where its browser's downloads are kept (the computer's own folder, outside its sandbox). */
  downloadsDir: string;
};

export type DesktopOptions = DesktopBrowserSetup & {
  display: XDisplay;
  worker: WorkerClient;
  workspace: string;
  /** Its sandbox: the desktop's browser runs in it, and it ends with the desktop. */
  sandbox?: ComputerSandbox;
  /** Its terminal, where its organization may run commands. */
  terminal?: Launched;
  /** Host mode off X11 (macOS, Windows): no xdotool, nut-js types. */
  typeWithNut?: boolean;
};

/**
 * A desktop computer: a private X display driven by its own nut-js worker (and xdotool for text),
 * with a Chromium on it for navigate, html and tabs.
 */
export class DesktopOperator implements TabbedOperator<DesktopActionName>, TerminalOperator {
  readonly kind = 'desktop' as const;
  readonly capabilities: ReadonlySet<DesktopActionName> = DESKTOP_CAPABILITIES;
  /** Set once close() starts, so the processes it ends are not taken for a crash. */
  private closing = false;

  private readonly unicode = new UnicodeKeymap((command, args, input) =>
    this.x11(command, args, input),
  );
  /** Actions and screenshots under way: a recorder's grabs keep out of their way. */
  private readonly activity = new Activity();
  private readonly browser: DesktopBrowser;

  constructor(private readonly options: DesktopOptions) {
    const { display } = options;
    this.browser = new DesktopBrowser({
      executablePath: options.browser,
      displayEnv: options.sandbox ? sandboxDisplayEnv(display.name) : display.env,
      sandbox: options.sandbox,
      width: display.width,
      height: display.height,
      userDataDir: join(options.workspace, '.browser'),
      downloadsDir: options.downloadsDir,
      maxTabs: options.maxTabs,
      report: options.report,
    });
  }

  /** What its browser downloaded. */
  get downloads(): BrowserDownloads {
    return this.browser.downloads;
  }

  /**
   * Calls `listener` once if the display, the worker or the sandbox ends on its own (not because
   * close() ended it). Its browser is not watched: it restarts on the next navigate.
   */
  onCrash(listener: () => void): void {
    let crashed = false;
    const crash = () => {
      if (crashed || this.closing) return;
      crashed = true;
      listener();
    };
    this.options.display.onExit(crash);
    this.options.worker.onExit(crash);
    this.options.sandbox?.onExit(crash);
  }

  perform(request: RequestOf<DesktopActionName>): Promise<ActionOutcome> {
    return this.activity.around(() => this.performNow(request));
  }

  private async performNow({
    action,
    tabId,
    signal,
  }: RequestOf<DesktopActionName>): Promise<ActionOutcome> {
    const { worker } = this.options;
    switch (action.type) {
      case 'click':
        if (action.button === 'back' || action.button === 'forward')
          await this.sideClick(action.at, action.button);
        else
          await worker.request({
            op: 'click',
            at: action.at,
            button: action.button,
            count: action.count,
          });
        break;
      case 'mouse_down':
      case 'mouse_up':
        await worker.request({
          op: 'press',
          at: action.at,
          button: pressable(action.button),
          down: action.type === 'mouse_down',
        });
        break;
      case 'move':
        await worker.request({ op: 'move', at: action.at });
        break;
      case 'drag':
        await worker.request({ op: 'drag', path: action.path });
        break;
      case 'scroll':
        await worker.request({ op: 'scroll', at: action.at, dx: action.dx, dy: action.dy });
        break;
      case 'type':
        await this.type(action.text);
        break;
      case 'keypress':
        await this.keys(action.keys, 'tap');
        break;
      case 'key_down':
      case 'key_up':
        await this.keys([action.key], action.type === 'key_down' ? 'down' : 'up');
        break;
      case 'navigate':
      case 'html':
      case 'list_tabs':
      case 'new_tab':
      case 'switch_tab':
      case 'close_tab':
        return this.browser.perform(action, tabId, signal);
      case 'viewport':
        return { result: this.resize(action.width, action.height, action.scale) };
    }
    return { result: {} };
  }

  private async keys(keys: Key[], mode: 'tap' | 'down' | 'up'): Promise<void> {
    const names = keys.map(nutKeys);
    if (names.every((name) => name !== undefined)) {
      await this.options.worker.request({ op: 'keys', keys: [...new Set(names.flat())], mode });
      return;
    }
    if (mode === 'tap' && keys.length === 1) return this.type(keys[0]!);
    throw new ActionFailure(
      `the key "${keys.find((_, i) => !names[i])}" cannot be held on a desktop computer`,
    );
  }

  /**
   * Exact text. ASCII goes through xdotool at full speed (nut-js misses Shift on Xvfb); other
   * characters through spare keycodes bound for them (see UnicodeKeymap).
   */
  private async type(text: string): Promise<void> {
    if (this.options.typeWithNut) {
      await this.options.worker.request({ op: 'type', text });
      return;
    }
    const runs = text.match(/[\x20-\x7e\n\t]+|[^\x20-\x7e\n\t]+/g) ?? [];
    const other = runs.filter((run) => !/^[\x20-\x7e\n\t]/.test(run)).join('');
    if (other) await this.unicode.bindAhead(other);
    for (const run of runs) {
      // Through stdin, not argv: every local user can read a process's arguments, and typed
      // text may be a password (a {{secret:NAME}} resolved a moment ago).
      if (/^[\x20-\x7e\n\t]/.test(run))
        await this.x11('xdotool', ['type', '--delay', '0', '--file', '-'], run);
      else await this.unicode.type(run);
    }
  }

  private async sideClick(at: Point, button: 'back' | 'forward'): Promise<void> {
    await this.xdotool([
      'mousemove',
      String(Math.round(at.x)),
      String(Math.round(at.y)),
      'click',
      '--delay',
      '0',
      SIDE_BUTTONS[button],
    ]);
  }

  private xdotool(args: string[]): Promise<void> {
    return this.x11('xdotool', args).then(() => undefined);
  }

  /** Runs an X11 tool on this display; its stdout, or an action failure saying what to install. */
  private async x11(command: string, args: string[], input?: string): Promise<string> {
    const ran = await runProgram(command, args, {
      env: { ...process.env, ...this.options.display.env },
      input,
    }).catch((error: Error) => {
      throw new ActionFailure(
        `${command} is needed on desktops (${X11_PACKAGES[command] ?? command}): ${error.message}`,
      );
    });
    if (ran.code !== 0) throw new ActionFailure(`${command} failed: ${ran.stderr.trim()}`);
    return ran.stdout;
  }

  private resize(
    width: number,
    height: number,
    scale: number | undefined,
  ): Record<string, unknown> {
    const { display } = this.options;
    if (width === display.width && height === display.height && (scale ?? 1) === 1) {
      return { width, height, scale_factor: 1 };
    }
    throw invalidRequest(
      `a desktop's screen is fixed at ${display.width}×${display.height}: Xvfb cannot change its size after start; create a desktop computer with display {width, height}`,
      'width',
    );
  }

  screenshot(): Promise<Screenshot> {
    return this.activity.around(async () => {
      const shot = await this.options.worker.request({ op: 'screenshot' });
      // Structured clone delivers a Uint8Array; wrap it without copying.
      const { buffer, byteOffset, byteLength } = shot.png;
      return { ...shot, png: Buffer.from(buffer, byteOffset, byteLength) };
    });
  }

  /**
   * Grabs the display when it changes, at most at the requested rate, while someone watches;
   * sends the pointer when it moves. The worker says when the screen changed (the X server tells
   * it), so a change is grabbed as soon as it is drawn and a still screen is not grabbed at all.
   * For the recorder alone (options.betweenActions), grabs wait while actions run: they share the
   * worker with the typing and clicking.
   */
  startCapture(
    options: CaptureOptions,
    onFrame: FrameSink,
    onCursor: CursorSink,
  ): Promise<() => Promise<void>> {
    const { worker } = this.options;
    let running = true;
    let lastCursor = '';
    const interval = 1000 / options.fps;
    let paused = false;
    let resume: (() => void) | undefined;
    const unsubscribe = options.betweenActions
      ? keepOutOfActions(this.activity, (run) => {
          paused = !run;
          if (run) resume?.();
        })
      : () => {};
    // Stopped, it does not wait for an action to end: the stop would wait for it for good (it
    // unsubscribed from the activity that would say so), and with it Benchtop's close.
    const unpaused = async () => {
      if (paused && running) await new Promise<void>((resolve) => (resume = resolve));
      resume = undefined;
      return running;
    };
    const cursorAt = (cursor: { x: number; y: number }) => {
      const at = `${cursor.x},${cursor.y}`;
      if (at === lastCursor) return;
      lastCursor = at;
      onCursor(cursor);
    };
    const loop = (async () => {
      // The first frame always comes (a new viewer needs one); then only changes.
      let first = true;
      while (await unpaused()) {
        try {
          if (!first) {
            const seen = await worker.request({ op: 'changes', waitMs: CURSOR_POLL_MS });
            if (!running) break;
            cursorAt(seen.cursor);
            // A recorder keeps out of an action that began while it waited.
            if (!seen.changed || !(await unpaused())) continue;
          }
          const started = Date.now();
          const frame = await worker.request({
            op: 'frame',
            quality: options.quality,
            maxWidth: options.maxWidth,
            ifChanged: !first,
          });
          if (!running) break;
          first = false;
          if (frame.jpeg) {
            const { buffer, byteOffset, byteLength } = frame.jpeg;
            onFrame({
              jpeg: Buffer.from(buffer, byteOffset, byteLength),
              width: frame.width,
              height: frame.height,
            });
          }
          cursorAt(frame.cursor);
          // A grab that found the screen as last sent sent nothing: the next one may come sooner.
          // A change Chromium draws in two steps, the first showing nothing new, was otherwise
          // seen a whole interval late (a live view click's reaction 90–115 ms instead of ~50).
          // Still paced: a window redrawn the same again and again is grabbed twice the rate.
          const wait = frame.jpeg ? interval : interval / 2;
          await sleep(Math.max(0, wait - (Date.now() - started)));
        } catch {
          // The worker ended: the computer ends with it, and the hub stops this loop.
          break;
        }
      }
    })();
    return Promise.resolve(async () => {
      running = false;
      unsubscribe();
      resume?.();
      // A loop waiting for the screen to change stops now, not when its wait ends.
      await worker.request({ op: 'wake' }).catch(() => {});
      await loop;
    });
  }

  /**
   * Only an action that ran in the desktop's browser names a tab; there is no page otherwise (a
   * tab_id asked for does not make a click on the screen one of a page's).
   */
  pageContext(tab: { executed?: string }): Promise<PageContext | undefined> {
    return this.browser.pageContext(tab.executed);
  }

  /** Undefined: actions other than the browser's (a click, a wait) act on the whole screen. */
  /** A desktop's screen has no DOM to read: policies on the page never match here. */
  look(): Promise<PageLook> {
    return Promise.resolve({ tabId: null, url: null, target: null });
  }

  mainTabId(): undefined {
    return undefined;
  }

  endTerminal(): void {
    // Its shell runs in a session of its own; it ends when the terminal's pty closes.
    this.options.terminal?.kill();
  }

  async close(): Promise<void> {
    this.closing = true;
    // Before the display goes: Chromium saves its profile and exits by itself.
    await this.browser.close();
    this.options.worker.close();
    await this.options.display.close();
    await this.options.sandbox?.close();
  }
}

function pressable(button: MouseButton): WorkerButton {
  if (button === 'back' || button === 'forward')
    throw new ActionFailure(`the ${button} button can only be clicked on a desktop`);
  return button;
}
