import { describe, expect, it } from 'vitest';
import { CommandRun, truncateText } from '../../src/main/core/shell/command-run.js';
import { splitUtf8 } from '../../src/main/core/shell/exec-runner.js';
import {
  canonicalJson,
  commandKey,
  RecentCommands,
  REMEMBER_MS,
} from '../../src/main/core/shell/recent-commands.js';

describe('splitUtf8', () => {
  it('cuts at most maxBytes of UTF-8 per piece and never inside a character', () => {
    const text = 'aé€😀'.repeat(10_000);
    for (const limit of [16, 17, 18, 19, 65_536]) {
      const pieces = splitUtf8(text, limit);
      for (const piece of pieces) {
        expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(limit);
        expect(piece).not.toContain('\uFFFD');
      }
      expect(pieces.join('')).toBe(text);
    }
  });

  it('gives nothing for empty text and one piece for short text', () => {
    expect(splitUtf8('', 10)).toEqual([]);
    expect(splitUtf8('abc', 10)).toEqual(['abc']);
  });
});

describe('truncateText', () => {
  it('never leaves half of a surrogate pair', () => {
    expect(truncateText('a😀b', 2)).toBe('a');
    expect(truncateText('a😀b', 3)).toBe('a😀');
    expect(truncateText('abc', 5)).toBe('abc');
  });
});

describe('canonicalJson', () => {
  it('does not depend on key order, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 2 } })).toBe(
      canonicalJson({ a: { c: 2, d: [1, { y: 2, z: 1 }] }, b: 1 }),
    );
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });
});

describe('RecentCommands', () => {
  const run = () => Promise.resolve(new CommandRun({ maxOutputLength: 10, replayLimit: 0 }));

  it('finds a command for ten minutes, then forgets it', () => {
    let now = 0;
    const recent = new RecentCommands(() => now);
    const key = commandKey('comp_a', 'exec_sync', { command: 'true' });
    const started = run();
    recent.remember(key, started);
    now = REMEMBER_MS - 1;
    expect(recent.find(key)).toBe(started);
    expect(recent.find(commandKey('comp_b', 'exec_sync', { command: 'true' }))).toBeUndefined();
    expect(recent.find(commandKey('comp_a', 'exec', { command: 'true' }))).toBeUndefined();
    now = REMEMBER_MS;
    expect(recent.find(key)).toBeUndefined();
  });

  it('forgets a command that could not start', async () => {
    const recent = new RecentCommands();
    const failed = Promise.reject(new Error('bad cwd'));
    recent.remember('k', failed);
    await failed.catch(() => {});
    await Promise.resolve();
    expect(recent.find('k')).toBeUndefined();
  });
});
