import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  readStoredSettings,
  writeStoredSettings,
} from '../../src/main/core/store/settings-store.js';
import { windowOptions, windowUrl } from '../../src/main/window/window-options.js';
import {
  boundsOnDisplay,
  PREFERENCES_FILE,
  routeOf,
  SAVE_DELAY_MS,
  windowPreferences,
  type PreferencesStore,
} from '../../src/main/window/window-preferences.js';

/** electron-store's get/set over a Map; it counts writes and can fail like a broken disk. */
class MemoryStore implements PreferencesStore {
  readonly values = new Map<string, unknown>();
  writes = 0;
  failReads = false;
  failWrites = false;
  constructor(initial: Record<string, unknown> = {}) {
    for (const [key, value] of Object.entries(initial)) this.values.set(key, value);
  }
  get(key: string): unknown {
    if (this.failReads) throw new Error('EACCES: permission denied');
    return structuredClone(this.values.get(key));
  }
  set(key: string, value: unknown): void {
    if (this.failWrites) throw new Error('ENOSPC: no space left on device');
    this.writes++;
    this.values.set(key, structuredClone(value));
  }
}

type Rect = { x: number; y: number; width: number; height: number };

/** A BrowserWindow as far as its place goes: moving it emits what Electron emits. */
class FakeWindow extends EventEmitter {
  readonly webContents = new EventEmitter();
  bounds: Rect = { x: 100, y: 80, width: 1280, height: 860 };
  maximized = false;
  fullScreen = false;
  getNormalBounds(): Rect {
    return { ...this.bounds };
  }
  isMaximized(): boolean {
    return this.maximized;
  }
  isFullScreen(): boolean {
    return this.fullScreen;
  }
  moveTo(x: number, y: number): void {
    this.bounds = { ...this.bounds, x, y };
    this.emit('move');
  }
  navigate(url: string, isMainFrame = true): void {
    this.webContents.emit('did-navigate-in-page', {}, url, isMainFrame);
  }
}

const page = 'http://127.0.0.1:4422/ui/';
const laptop = { workArea: { x: 0, y: 25, width: 1440, height: 875 } };
const monitor = { workArea: { x: 1440, y: 0, width: 2560, height: 1400 } };

function setup(store: PreferencesStore = new MemoryStore()) {
  const lines: string[] = [];
  const preferences = windowPreferences(() => store, { log: (line) => lines.push(line) });
  const window = new FakeWindow();
  preferences.track(window, page);
  return { preferences, window, lines };
}

describe('the window preferences', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('opens at the default size on the default screen when nothing is saved', () => {
    const store = new MemoryStore();
    const { preferences, lines } = setup(store);
    expect(preferences.restore([laptop])).toEqual({
      bounds: undefined,
      maximized: false,
      route: undefined,
    });
    expect(store.writes).toBe(0);
    expect(lines).toEqual([]);
  });

  it('saves the place once the window stops moving, not on every move of a drag', () => {
    const store = new MemoryStore();
    const { window } = setup(store);
    for (let x = 100; x < 400; x += 10) window.moveTo(x, 90);
    vi.advanceTimersByTime(SAVE_DELAY_MS - 1);
    expect(store.writes).toBe(0);
    vi.advanceTimersByTime(1);
    expect(store.writes).toBe(1);
    expect(store.values.get('window')).toEqual({
      bounds: { x: 390, y: 90, width: 1280, height: 860 },
      maximized: false,
    });
  });

  it('saves the normal bounds and the maximized state, at once when the window closes', () => {
    const store = new MemoryStore();
    const { window } = setup(store);
    window.maximized = true;
    window.emit('maximize');
    window.emit('close');
    expect(store.values.get('window')).toEqual({
      bounds: { x: 100, y: 80, width: 1280, height: 860 },
      maximized: true,
    });
    window.emit('closed');
    vi.runAllTimers();
    expect(store.writes).toBe(1);
  });

  it('writes a pending place when the app quits before the save delay is over', () => {
    const store = new MemoryStore();
    const { preferences, window } = setup(store);
    window.moveTo(300, 200);
    preferences.flush();
    expect(store.values.get('window')).toMatchObject({ bounds: { x: 300, y: 200 } });
    preferences.flush();
    vi.runAllTimers();
    expect(store.writes).toBe(1);
  });

  it("keeps the last place while the window is full screen (the live view's)", () => {
    const store = new MemoryStore();
    const { window } = setup(store);
    window.moveTo(200, 100);
    vi.runAllTimers();
    window.fullScreen = true;
    window.bounds = { x: 0, y: 0, width: 1440, height: 900 };
    window.emit('resize');
    vi.runAllTimers();
    window.emit('close');
    expect(store.values.get('window')).toMatchObject({ bounds: { x: 200, y: 100 } });
    expect(store.writes).toBe(1);
  });

  it('reopens where the window was closed, within a run and in the next one', () => {
    const store = new MemoryStore();
    const { preferences, window } = setup(store);
    window.bounds = { x: 1600, y: 120, width: 1500, height: 1000 };
    window.emit('close');
    const expected = { bounds: { x: 1600, y: 120, width: 1500, height: 1000 }, maximized: false };
    expect(preferences.restore([laptop, monitor])).toMatchObject(expected);
    const nextRun = windowPreferences(() => store, { log: () => {} });
    expect(nextRun.restore([laptop, monitor])).toMatchObject(expected);
  });

  it('drops a place on a monitor that has been unplugged since, and keeps the maximized state', () => {
    const store = new MemoryStore({
      window: { bounds: { x: 1600, y: 120, width: 1500, height: 1000 }, maximized: true },
    });
    const { preferences } = setup(store);
    expect(preferences.restore([laptop])).toMatchObject({ bounds: undefined, maximized: true });
  });

  it('ignores corrupt values and an unreadable store, and still opens', () => {
    const corrupt = [
      { window: 'big' },
      { window: { bounds: { x: 'left', y: 0, width: 1280, height: 860 }, maximized: false } },
      { window: { bounds: { x: 0, y: 0, width: -5, height: 860 }, maximized: false } },
      { window: { bounds: { x: 0, y: 0, width: 1e9, height: 860 }, maximized: false } },
      { window: { bounds: { x: 0.5, y: 0, width: 1280, height: 860 }, maximized: 'yes' } },
      { route: 'javascript:alert(1)' },
      { route: '#/computers/../../etc' },
      { route: 42 },
    ];
    for (const values of corrupt) {
      const { preferences, lines } = setup(new MemoryStore(values));
      expect(preferences.restore([laptop])).toEqual({
        bounds: undefined,
        maximized: false,
        route: undefined,
      });
      expect(lines.join('\n')).toMatch(/is not valid, using the default/);
    }

    const unreadable = new MemoryStore();
    unreadable.failReads = true;
    expect(setup(unreadable).preferences.restore([laptop]).bounds).toBeUndefined();

    const lines: string[] = [];
    const preferences = windowPreferences(
      () => {
        throw new Error('EISDIR: illegal operation on a directory');
      },
      { log: (line) => lines.push(line) },
    );
    const window = new FakeWindow();
    preferences.track(window, page);
    window.moveTo(300, 200);
    window.navigate(`${page}#/settings`);
    window.emit('close');
    // Nothing is saved, but the window still reopens where it was within this run.
    expect(preferences.restore([laptop])).toMatchObject({
      bounds: { x: 300, y: 200 },
      route: '#/settings',
    });
    expect(lines.join('\n')).toMatch(/unreadable, using the defaults: .*EISDIR/);
  });

  it('reports a failing disk once and goes on working', () => {
    const store = new MemoryStore();
    store.failWrites = true;
    const { preferences, window, lines } = setup(store);
    window.moveTo(300, 200);
    vi.runAllTimers();
    window.moveTo(310, 200);
    window.emit('close');
    window.navigate(`${page}#/tasks`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/not saved: .*ENOSPC/);
    expect(preferences.restore([laptop])).toMatchObject({ bounds: { x: 310 }, route: '#/tasks' });
  });

  it("remembers the screen from the window page's in-page navigations only", () => {
    const store = new MemoryStore();
    const { window } = setup(store);
    window.navigate(`${page}#/tasks/task_1`);
    expect(store.values.get('route')).toBe('#/tasks/task_1');
    window.navigate(`${page}#/settings`, false);
    window.navigate('https://example.com/ui/#/settings');
    window.navigate('http://127.0.0.1:4422/openapi.json#/settings');
    window.navigate(`${page}#/nowhere`);
    window.navigate(`${page}#`);
    expect(store.values.get('route')).toBe('#/tasks/task_1');
    expect(store.writes).toBe(1);
  });

  it("reopens a live view within a run, but the sessions list once the app's computers ended", () => {
    const store = new MemoryStore();
    const { preferences, window } = setup(store);
    window.navigate(`${page}#/computers/cmp_Ab-1`);
    expect(preferences.restore([laptop]).route).toBe('#/computers/cmp_Ab-1');
    const nextRun = windowPreferences(() => store, { log: () => {} });
    expect(nextRun.restore([laptop]).route).toBe('#/sessions');

    window.navigate(`${page}#/tasks/task_9`);
    const afterTask = windowPreferences(() => store, { log: () => {} });
    expect(afterTask.restore([laptop]).route).toBe('#/tasks/task_9');
  });
});

describe('a saved place on the connected displays', () => {
  it('is kept when the window is on a display', () => {
    const bounds = { x: 100, y: 80, width: 1200, height: 800 };
    expect(boundsOnDisplay(bounds, [laptop])).toEqual(bounds);
    expect(boundsOnDisplay({ ...bounds, x: 2000 }, [laptop, monitor])).toEqual({
      ...bounds,
      x: 2000,
    });
  });

  it('is kept across two displays, or partly off one, while its top strip can be grabbed', () => {
    const across = { x: 1000, y: 100, width: 1200, height: 800 };
    expect(boundsOnDisplay(across, [laptop, monitor])).toEqual(across);
    const hangingLeft = { x: -1000, y: 100, width: 1200, height: 800 };
    expect(boundsOnDisplay(hangingLeft, [laptop])).toEqual(hangingLeft);
    // Windows' invisible borders put a window snapped to the top a few pixels above it.
    const snapped = { x: -7, y: 18, width: 1000, height: 700 };
    expect(boundsOnDisplay(snapped, [laptop])).toEqual(snapped);
  });

  it('is dropped when the window would be off every display or its title bar out of reach', () => {
    const size = { width: 1200, height: 800 };
    expect(boundsOnDisplay({ x: 5000, y: 100, ...size }, [laptop, monitor])).toBeUndefined();
    expect(boundsOnDisplay({ x: -1150, y: 100, ...size }, [laptop])).toBeUndefined();
    expect(boundsOnDisplay({ x: 100, y: -300, ...size }, [laptop])).toBeUndefined();
    expect(boundsOnDisplay({ x: 100, y: 880, ...size }, [laptop])).toBeUndefined();
    expect(boundsOnDisplay({ x: 100, y: 80, ...size }, [])).toBeUndefined();
  });

  it('is clamped between the smallest usable window and the display', () => {
    expect(boundsOnDisplay({ x: 10, y: 30, width: 200, height: 100 }, [laptop])).toEqual({
      x: 10,
      y: 30,
      width: 900,
      height: 600,
    });
    expect(boundsOnDisplay({ x: 10, y: 30, width: 4000, height: 2500 }, [laptop])).toEqual({
      x: 10,
      y: 30,
      width: 1440,
      height: 875,
    });
    // Clamped first, so a window that was 4000 px wide cannot shrink off the display.
    expect(
      boundsOnDisplay({ x: -3000, y: 30, width: 4000, height: 800 }, [laptop]),
    ).toBeUndefined();
  });
});

describe('the window page and its screens', () => {
  it('loads the window URL with the restored screen', () => {
    expect(windowUrl('http://127.0.0.1:4422', undefined, '#/tasks/task_1')).toBe(
      'http://127.0.0.1:4422/ui/#/tasks/task_1',
    );
    expect(windowUrl('http://127.0.0.1:4422', 'http://localhost:5173', '#/settings')).toBe(
      'http://localhost:5173/#/settings',
    );
    expect(windowUrl('http://127.0.0.1:4422', undefined, undefined)).toBe(
      'http://127.0.0.1:4422/ui/',
    );
  });

  it('takes the restored bounds over the default size, and keeps the minimum', () => {
    const connection = { baseUrl: 'http://127.0.0.1:4422', apiKey: `sk_${'w'.repeat(32)}` };
    const bounds = { x: 40, y: 50, width: 1000, height: 700 };
    expect(windowOptions({ preloadPath: '/p.cjs', connection, bounds })).toMatchObject({
      ...bounds,
      minWidth: 900,
      minHeight: 600,
    });
    const fresh = windowOptions({ preloadPath: '/p.cjs', connection });
    expect(fresh).toMatchObject({ width: 1280, height: 860 });
    expect(fresh).not.toHaveProperty('x');
  });

  it('reads a screen back from a URL of the window page', () => {
    expect(routeOf(`${page}#/computers/a%2Fb`, page)).toBe('#/computers/a%2Fb');
    expect(routeOf(`${page}#/tasks`, page)).toBe('#/tasks');
    expect(routeOf('http://localhost:5173/#/tasks', 'http://localhost:5173')).toBe('#/tasks');
    expect(routeOf('not a url', page)).toBeUndefined();
  });
});

describe('the preferences file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'benchtop-window-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** electron-store is conf with a name for configName and userData for cwd. */
  const openFile = () =>
    new Conf<Record<string, unknown>>({
      cwd: dir,
      configName: PREFERENCES_FILE.name,
      clearInvalidConfig: PREFERENCES_FILE.clearInvalidConfig,
    });

  it("lives beside the server's config.json in a shared folder without touching it", () => {
    writeStoredSettings(dir, { server: { port: 4555 } });
    const preferences = windowPreferences(openFile, { log: () => {} });
    const window = new FakeWindow();
    preferences.track(window, page);
    window.navigate(`${page}#/settings`);
    window.emit('close');

    expect(readStoredSettings(dir)).toEqual({ server: { port: 4555 } });
    expect(JSON.parse(readFileSync(join(dir, 'window-state.json'), 'utf8'))).toEqual({
      window: { bounds: { x: 100, y: 80, width: 1280, height: 860 }, maximized: false },
      route: '#/settings',
    });
    const nextRun = windowPreferences(openFile, { log: () => {} });
    expect(nextRun.restore([laptop])).toMatchObject({ bounds: { x: 100 }, route: '#/settings' });
  });

  it('starts from the defaults over a half-written file, and replaces it', () => {
    writeFileSync(join(dir, 'window-state.json'), '{"window": {"bounds": {"x": 1');
    const preferences = windowPreferences(openFile, { log: () => {} });
    expect(preferences.restore([laptop]).bounds).toBeUndefined();
    const window = new FakeWindow();
    preferences.track(window, page);
    window.emit('close');
    expect(JSON.parse(readFileSync(join(dir, 'window-state.json'), 'utf8'))).toMatchObject({
      window: { maximized: false },
    });
  });

  it('starts from the defaults when the file cannot be read at all', () => {
    // A folder where the file should be fails the read whatever the user's rights (tests run as root).
    mkdirSync(join(dir, 'window-state.json'));
    const lines: string[] = [];
    const preferences = windowPreferences(openFile, { log: (line) => lines.push(line) });
    expect(preferences.restore([laptop])).toEqual({
      bounds: undefined,
      maximized: false,
      route: undefined,
    });
    expect(lines.join('\n')).toMatch(/unreadable, using the defaults: .*EISDIR/);
  });
});
