import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Settings } from '../../src/main/core/config.js';
import { SettingsSource } from '../../src/main/core/runtime/settings-source.js';
import { SettingsService } from '../../src/main/core/settings-service.js';

describe('the settings source', () => {
  it('hands out deep-frozen snapshots that writes cannot change', () => {
    const initial = Settings.parse({});
    const source = new SettingsSource(initial);
    const snapshot = source.current();
    expect(() => {
      (snapshot.limits as { max_tabs: number }).max_tabs = 1;
    }).toThrow(TypeError);
    expect(() => {
      (snapshot.server.allowed_hosts as string[]).push('evil.example');
    }).toThrow(TypeError);
    // A copy: the object it was built from stays the caller's.
    initial.limits.max_tabs = 3;
    expect(source.current().limits.max_tabs).toBe(20);
  });

  it('replaces the snapshot on change and tells listeners until they unsubscribe', () => {
    const source = new SettingsSource(Settings.parse({}));
    const first = source.current();
    const seen: Array<[number, number]> = [];
    const unsubscribe = source.subscribe((next, previous) =>
      seen.push([next.limits.max_tabs, previous.limits.max_tabs]),
    );
    source.replace({ ...first, limits: { ...first.limits, max_tabs: 5 } });
    expect(first.limits.max_tabs).toBe(20);
    expect(source.current().limits.max_tabs).toBe(5);
    unsubscribe();
    source.replace(first);
    expect(seen).toEqual([[5, 20]]);
    expect(source.current().limits.max_tabs).toBe(20);
  });

  it('a settings update replaces the snapshot, and restart keys keep their running values', () => {
    const source = new SettingsSource(Settings.parse({}));
    const service = new SettingsService({
      source,
      dataDir: mkdtempSync(join(tmpdir(), 'benchtop-settings-')),
    });
    const before = source.current();
    const answer = service.update({ limits: { max_tabs: 7 }, browser: { warm_pool: 0 } });
    expect(answer.restart_required).toEqual(['browser.warm_pool']);
    expect(source.current()).not.toBe(before);
    expect(source.current().limits.max_tabs).toBe(7);
    expect(source.current().browser.warm_pool).toBe(before.browser.warm_pool);
    expect(Object.isFrozen(source.current().limits)).toBe(true);
  });
});
