import { describe, expect, it } from 'vitest';
import { safeName } from '../../src/main/core/computers/browser/browser-downloads.js';

describe('the name a download is kept under', () => {
  it.each([
    ['invoice.csv', 'invoice.csv'],
    ['../../.config/benchtop/keys.json', 'keys.json'],
    ['C:\\Users\\me\\report.pdf', 'report.pdf'],
    ['.bashrc', 'bashrc'],
    ['..', 'download'],
    ['', 'download'],
    ['  spaced name (final).txt  ', 'spaced name (final).txt'],
    ['tab\there\u0000.csv', 'tabhere.csv'],
  ])('%j is kept as %j', (suggested, kept) => {
    expect(safeName(suggested)).toBe(kept);
  });

  it('cuts a long name, keeping its extension', () => {
    const kept = safeName(`${'x'.repeat(300)}.tar.gz`);
    expect(kept).toHaveLength(120);
    expect(kept.endsWith('x.gz')).toBe(true);
  });
});
