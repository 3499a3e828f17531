import { describe, expect, it } from 'vitest';
import { parseChord } from '../../src/main/core/keyboard/key-names.js';
import { ActionQueue, type ViewAction } from '../../src/renderer/src/live/action-queue.js';
import {
  keyAction,
  toComputerPoint,
  wheelPixels,
} from '../../src/renderer/src/live/input-mapping.js';

const key = (key: string, mods: Partial<Record<'ctrl' | 'alt' | 'meta' | 'shift', boolean>> = {}) =>
  keyAction({
    key,
    ctrlKey: !!mods.ctrl,
    altKey: !!mods.alt,
    metaKey: !!mods.meta,
    shiftKey: !!mods.shift,
  });

describe('the live view maps the displayed view to the computer', () => {
  const display = { width: 1280, height: 720 };

  it('hits every pixel exactly when shown unscaled', () => {
    const box = { left: 206, top: 140, width: 1280, height: 720 };
    expect(toComputerPoint({ x: 356, y: 270 }, box, display)).toEqual({ x: 150, y: 130 });
    expect(toComputerPoint({ x: 206, y: 140 }, box, display)).toEqual({ x: 0, y: 0 });
    expect(toComputerPoint({ x: 1485, y: 859 }, box, display)).toEqual({ x: 1279, y: 719 });
  });

  it('scales a smaller view up to display pixels and never leaves the screen', () => {
    const box = { left: 204, top: 158.4, width: 1052, height: 591.75 };
    expect(toComputerPoint({ x: 204 + 526, y: 158 + 296 }, box, display)).toEqual({
      x: 640,
      y: 360,
    });
    expect(toComputerPoint({ x: 0, y: 0 }, box, display)).toEqual({ x: 0, y: 0 });
    expect(toComputerPoint({ x: 5000, y: 5000 }, box, display)).toEqual({ x: 1279, y: 719 });
  });

  it('reads wheel lines and pages as pixels', () => {
    expect(wheelPixels({ deltaX: 0, deltaY: 120, deltaMode: 0 }, display)).toEqual({
      dx: 0,
      dy: 120,
    });
    expect(wheelPixels({ deltaX: 1, deltaY: 3, deltaMode: 1 }, display)).toEqual({
      dx: 40,
      dy: 120,
    });
    expect(wheelPixels({ deltaX: 0, deltaY: 1, deltaMode: 2 }, display)).toEqual({
      dx: 0,
      dy: 720,
    });
  });
});

describe('the live view turns keys into actions', () => {
  it('types printable characters as text, with the layout already applied', () => {
    expect(key('a')).toEqual({ type: 'type', text: 'a' });
    expect(key('A', { shift: true })).toEqual({ type: 'type', text: 'A' });
    expect(key('!', { shift: true })).toEqual({ type: 'type', text: '!' });
    expect(key(' ')).toEqual({ type: 'type', text: ' ' });
    expect(key('é')).toEqual({ type: 'type', text: 'é' });
  });

  it('sends named keys and combinations as hotkeys', () => {
    expect(key('Enter')).toEqual({ type: 'hotkey', keys: ['enter'] });
    expect(key('Tab', { shift: true })).toEqual({ type: 'hotkey', keys: ['shift', 'tab'] });
    expect(key('a', { ctrl: true })).toEqual({ type: 'hotkey', keys: ['ctrl', 'a'] });
    expect(key('T', { ctrl: true, shift: true })).toEqual({
      type: 'hotkey',
      keys: ['ctrl', 'shift', 't'],
    });
    expect(key('ArrowLeft', { alt: true })).toEqual({ type: 'hotkey', keys: ['alt', 'arrowleft'] });
    expect(key('F5')).toEqual({ type: 'hotkey', keys: ['f5'] });
  });

  it('sends nothing for a lone modifier or a key it cannot name', () => {
    for (const name of ['Shift', 'Control', 'Alt', 'Meta', 'CapsLock', 'Dead', 'Unidentified'])
      expect(key(name)).toBeUndefined();
    expect(key('MediaPlayPause')).toBeUndefined();
  });

  it('only sends key names the server accepts', () => {
    const named = ['Enter', 'Escape', 'Tab', 'Backspace', 'Delete', 'Insert', 'Home', 'End'];
    const more = ['PageUp', 'PageDown', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'F12'];
    for (const name of [...named, ...more, 'a', '1', '+']) {
      const action = key(name, { ctrl: true, alt: true, meta: true, shift: true });
      expect(action?.type).toBe('hotkey');
      if (action?.type === 'hotkey') expect(() => parseChord(action.keys, 'keys')).not.toThrow();
    }
  });
});

describe('the live view sends actions in order without falling behind', () => {
  it('merges typing and wheel turns that wait behind a request, keeping the order', async () => {
    const sent: ViewAction[] = [];
    let release: () => void = () => {};
    const queue = new ActionQueue(
      async (action) => {
        sent.push(structuredClone(action));
        if (sent.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      (error) => {
        throw error;
      },
    );
    queue.push({ path: 'click', body: { x: 1, y: 2 } });
    for (const text of ['H', 'e', 'y']) queue.push({ path: 'type', body: { text } });
    queue.push({ path: 'hotkey', body: { keys: ['enter'] } });
    queue.push({ path: 'scroll', body: { x: 5, y: 5, dx: 0, dy: 100 } });
    queue.push({ path: 'scroll', body: { x: 5, y: 5, dx: 10, dy: 100 } });
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sent).toEqual([
      { path: 'click', body: { x: 1, y: 2 } },
      { path: 'type', body: { text: 'Hey' } },
      { path: 'hotkey', body: { keys: ['enter'] } },
      { path: 'scroll', body: { x: 5, y: 5, dx: 10, dy: 200 } },
    ]);
  });

  it('reports a failed action and goes on with the next', async () => {
    const errors: unknown[] = [];
    const sent: string[] = [];
    const queue = new ActionQueue(
      (action) => {
        sent.push(action.path);
        return action.path === 'click'
          ? Promise.reject(new Error('computer gone'))
          : Promise.resolve();
      },
      (error) => errors.push(error),
    );
    queue.push({ path: 'click', body: { x: 1, y: 2 } });
    queue.push({ path: 'type', body: { text: 'x' } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sent).toEqual(['click', 'type']);
    expect(errors).toHaveLength(1);
  });
});
