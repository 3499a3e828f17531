import { describe, expect, it } from 'vitest';
import {
  emptyRow,
  MASKED_SECRET,
  modelsPatch,
  toRows,
} from '../../src/renderer/src/settings/provider-rows.js';
import { MASKED_SECRET as CONTRACT_MASK } from '../../src/shared/settings.js';

const stored = {
  default: 'cloud',
  providers: {
    cloud: {
      provider: 'lightcone' as const,
      base_url: 'https://api.tzafon.ai',
      api_key: '********',
    },
    local: { provider: 'openai-compatible' as const, base_url: 'http://127.0.0.1:8000/v1' },
  },
};

describe('the models form sends only what changed', () => {
  it('uses the contract’s mask', () => {
    expect(MASKED_SECRET).toBe(CONTRACT_MASK);
  });

  it('sends nothing when nothing changed, so a masked key is never sent back', () => {
    expect(modelsPatch(stored, 'cloud', toRows(stored.providers))).toBeUndefined();
  });

  it('sends a changed field, a cleared field as null and a removed provider as null', () => {
    const rows = toRows(stored.providers).filter((row) => row.name !== 'local');
    rows[0] = { ...rows[0]!, base_url: '', model: 'northstar', api_key: 'sk-new' };
    expect(modelsPatch(stored, 'cloud', rows)).toEqual({
      models: {
        providers: {
          local: null,
          cloud: { base_url: null, model: 'northstar', api_key: 'sk-new' },
        },
      },
    });
  });

  it('sends a new provider whole and a new default', () => {
    const rows = [
      ...toRows(stored.providers),
      { ...emptyRow('demo', 'scripted'), script: '/s.json' },
    ];
    expect(modelsPatch(stored, 'demo', rows)).toEqual({
      models: {
        default: 'demo',
        providers: { demo: { provider: 'scripted', script: '/s.json' } },
      },
    });
  });

  it('sends a timeout as a number', () => {
    const rows = toRows(stored.providers).map((row) =>
      row.name === 'local' ? { ...row, timeout_ms: '90000' } : row,
    );
    expect(modelsPatch(stored, 'cloud', rows)).toEqual({
      models: { providers: { local: { timeout_ms: 90000 } } },
    });
  });
});
