import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/main/core/config.js';
import { openConfFile } from '../../src/main/core/store/conf-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data dir whose settings.json holds `text`, opened as Benchtop opens it. */
function openHolding(text: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'benchtop-conf-'));
  dirs.push(cwd);
  const file = join(cwd, 'settings.json');
  writeFileSync(file, text);
  const open = () => openConfFile<Record<string, unknown>>({ cwd, configName: 'settings' });
  return { file, open };
}

describe('a JSON file of the data dir that a person may edit', () => {
  it('reads an object as it is', () => {
    expect(openHolding('{"limits": {"max_tabs": 9}}').open().store).toEqual({
      limits: { max_tabs: 9 },
    });
  });

  it('reads an empty file as holding nothing, and writes over it on the first change', () => {
    for (const text of ['', '  \n']) {
      const { file, open } = openHolding(text);
      const conf = open();
      expect(conf.store).toEqual({});
      conf.set('limits', { max_tabs: 7 });
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ limits: { max_tabs: 7 } });
    }
  });

  it.each([
    ['{"limits": {"max_tabs": 9,}}', /is not valid JSON \(.+\)/],
    ['"max_tabs"', /holds a string, not a JSON object/],
    ['[9]', /holds an array, not a JSON object/],
    ['null', /holds null, not a JSON object/],
    ['9', /holds a number, not a JSON object/],
  ])('refuses %s, naming the file, and leaves it as it was', (text, says) => {
    const { file, open } = openHolding(text);
    expect(open).toThrow(ConfigError);
    expect(open).toThrow(says);
    expect(open).toThrow(file);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});
