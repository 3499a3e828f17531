import { describe, expect, it } from 'vitest';
import { emptyRow, modelsPatch, toRows } from '../../src/renderer/src/settings/provider-rows.js';
import {
  backendFromDraft,
  backendsPatch,
} from '../../src/renderer/src/settings/backends-section.js';
import {
  generalDraft,
  generalPatch,
  LIMITS,
} from '../../src/renderer/src/settings/general-section.js';
import {
  organizationNameProblem,
  organizationRows,
  organizationsPatch,
} from '../../src/renderer/src/settings/organizations-section.js';
import { stripNulls } from '../../src/shared/common.js';
import { MASKED_SECRET, Settings, SettingsPatch } from '../../src/shared/settings.js';

const stored = {
  default: 'cloud',
  providers: {
    cloud: {
      provider: 'lightcone' as const,
      base_url: 'https://api.tzafon.ai',
      api_key: MASKED_SECRET,
    },
    local: { provider: 'openai-compatible' as const, base_url: 'http://127.0.0.1:8000/v1' },
  },
};

describe('the models form sends only what changed', () => {
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

  it('sends a price whole when one of its fields changed, and null once all are cleared', () => {
    const priced = {
      ...stored,
      providers: {
        ...stored.providers,
        local: {
          ...stored.providers.local,
          price: { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 },
        },
      },
    };
    const rows = toRows(priced.providers);
    expect(modelsPatch(priced, 'cloud', rows)).toBeUndefined();
    const local = rows.findIndex((row) => row.name === 'local');
    const edited = (change: Partial<(typeof rows)[number]>) =>
      rows.map((row, n) => (n === local ? { ...row, ...change } : row));
    expect(modelsPatch(priced, 'cloud', edited({ cached_input_per_mtok: '' }))).toEqual({
      models: {
        providers: {
          local: {
            price: { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: null },
          },
        },
      },
    });
    const cleared = edited({ input_per_mtok: '', output_per_mtok: '', cached_input_per_mtok: '' });
    expect(modelsPatch(priced, 'cloud', cleared)).toEqual({
      models: { providers: { local: { price: null } } },
    });
    const patch = modelsPatch(stored, 'cloud', [
      ...toRows(stored.providers).map((row) =>
        row.name === 'local' ? { ...row, input_per_mtok: '1', output_per_mtok: '4' } : row,
      ),
    ]);
    // As the server validates a body: nulls (removals) stripped first.
    expect(SettingsPatch.safeParse(stripNulls(patch)).error).toBeUndefined();
  });

  it('sends models.local_only only when it changed', () => {
    const rows = toRows(stored.providers);
    expect(modelsPatch(stored, 'cloud', rows, false)).toBeUndefined();
    expect(modelsPatch(stored, 'cloud', rows, true)).toEqual({ models: { local_only: true } });
    expect(modelsPatch({ ...stored, local_only: true }, 'cloud', rows, false)).toEqual({
      models: { local_only: false },
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

  it('sends a timeout and a number of retries as numbers, 0 included', () => {
    const rows = toRows(stored.providers).map((row) =>
      row.name === 'local' ? { ...row, timeout_ms: '90000', max_retries: '0' } : row,
    );
    expect(modelsPatch(stored, 'cloud', rows)).toEqual({
      models: { providers: { local: { timeout_ms: 90000, max_retries: 0 } } },
    });
    const saved = {
      ...stored,
      providers: { ...stored.providers, local: { ...stored.providers.local!, max_retries: 5 } },
    };
    const cleared = toRows(saved.providers).map((row) =>
      row.name === 'local' ? { ...row, max_retries: '' } : row,
    );
    expect(toRows(saved.providers).find((row) => row.name === 'local')!.max_retries).toBe('5');
    expect(modelsPatch(saved, 'cloud', cleared)).toEqual({
      models: { providers: { local: { max_retries: null } } },
    });
  });
});

describe('the general form sends only what changed', () => {
  const settings = Settings.parse({ proxy: { advanced_proxy_url: 'http://u:***@proxy:8080' } });

  it('sends nothing when nothing changed, so the masked proxy URL is never sent back', () => {
    expect(generalPatch(settings, generalDraft(settings))).toEqual({});
  });

  it('shows byte limits in GiB and MiB and sends them back in whole bytes', () => {
    const draft = generalDraft(settings);
    expect(draft.limits.stored_bytes_per_org).toBe('1');
    expect(draft.limits.max_input_bytes).toBe('8');
    expect(draft.limits.image_bytes_per_request).toBe('64');
    draft.limits.stored_bytes_per_org = '2.5';
    draft.limits.max_input_bytes = '0.3';
    expect(generalPatch(settings, draft)).toEqual({
      limits: { stored_bytes_per_org: 2.5 * 1024 ** 3, max_input_bytes: 314573 },
    });
  });

  it('does not send a byte limit that is only shown rounded', () => {
    const odd = Settings.parse({ limits: { stored_bytes_per_org: 1_000_000_007 } });
    const draft = generalDraft(odd);
    expect(draft.limits.stored_bytes_per_org).toBe('0.931');
    draft.limits.keys_per_org = '5';
    expect(generalPatch(odd, draft)).toEqual({ limits: { keys_per_org: 5 } });
  });

  it('sends the owner’s sandbox next to exec, and every new limit by its setting name', () => {
    const draft = generalDraft(settings);
    draft.exec = false;
    draft.sandboxOwner = false;
    draft.limits.retention_days = '7';
    draft.limits.images_per_request = '10';
    draft.limits.requests_per_second = '2.5';
    expect(generalPatch(settings, draft)).toEqual({
      exec: { enabled: false, sandbox_owner: false },
      limits: { retention_days: 7, images_per_request: 10, requests_per_second: 2.5 },
    });
    expect(SettingsPatch.safeParse(generalPatch(settings, draft)).success).toBe(true);
  });

  it('offers every limit of the schema', () => {
    expect(LIMITS.map((field) => field.key).sort()).toEqual(Object.keys(settings.limits).sort());
  });
});

describe('the organizations form sends only what changed', () => {
  // Parsed, so the other per-organization settings have their defaults.
  const stored = Settings.parse({
    organizations: { acme: { exec: true, desktops: false }, globex: { desktops: true } },
  }).organizations;

  it('sends nothing when nothing changed', () => {
    expect(organizationsPatch(stored, organizationRows(stored))).toBeUndefined();
  });

  it('sends a removed organization as null, a new one whole and a kept one’s change', () => {
    const rows = organizationRows(stored)
      .filter((row) => row.name !== 'globex')
      .map((row) => ({ ...row, desktops: true, network: false }));
    rows.push({ name: 'initech', exec: false, desktops: false, network: true });
    const patch = organizationsPatch(stored, rows);
    expect(patch).toEqual({
      organizations: {
        globex: null,
        acme: { desktops: true, network: false },
        initech: { exec: false, desktops: false, network: true },
      },
    });
    // As the server validates a body: nulls (removals) stripped first.
    expect(SettingsPatch.safeParse(stripNulls(patch)).error).toBeUndefined();
  });

  it('refuses an empty name, the owner and a name already listed, and trims', () => {
    expect(organizationNameProblem('   ', [])).toBeDefined();
    expect(organizationNameProblem(' local ', [])).toMatch(/owner/);
    expect(organizationNameProblem('acme ', ['acme'])).toMatch(/already listed/);
    expect(organizationNameProblem(' initech ', ['acme'])).toBeUndefined();
  });
});

describe('the backends section', () => {
  const local = { name: 'local', type: 'local' as const, max_computers: 20 };
  const pw = {
    name: 'pw-1',
    type: 'playwright' as const,
    url: 'ws://10.0.0.21:3000/',
    max_computers: 20,
  };

  it('adds a backend as settings keep it, or says why it cannot', () => {
    const draft = { name: ' pw-1 ', type: 'playwright' as const, url: 'ws://10.0.0.21:3000/' };
    expect(backendFromDraft(draft, [local])).toEqual({ row: pw });
    expect(backendFromDraft({ ...draft, executable: '/usr/bin/chromium' }, [local])).toEqual({
      row: { ...pw, executable_path: '/usr/bin/chromium' },
    });
    const problem = (result: ReturnType<typeof backendFromDraft>) =>
      'problem' in result ? result.problem : undefined;
    expect(problem(backendFromDraft({ ...draft, name: '' }, [local]))).toBe('Type a name for it.');
    expect(problem(backendFromDraft(draft, [local, pw]))).toBe('pw-1 is already listed.');
    expect(problem(backendFromDraft({ ...draft, name: 'pw 1' }, [local]))).toMatch(
      /^A name is 1 to 63 letters/,
    );
    expect(problem(backendFromDraft({ ...draft, url: 'http://10.0.0.21:3000' }, [local]))).toBe(
      'A playwright backend needs a url like ws://host:port/ (playwright run-server).',
    );
    const grid = { name: 'grid', type: 'selenium' as const, url: 'ws://hub:4444' };
    expect(problem(backendFromDraft(grid, [local]))).toMatch(/http:\/\/hub:4444/);
    const here = { name: 'here', type: 'local' as const, url: '' };
    expect(problem(backendFromDraft(here, [local]))).toBe('This machine is already listed.');
    expect(backendFromDraft(here, [pw])).toEqual({
      row: { name: 'here', type: 'local', max_computers: 20 },
    });
  });

  it('sends the whole list when anything in it changed, nothing otherwise', () => {
    expect(backendsPatch([local, pw], [local, pw])).toBeUndefined();
    const patch = backendsPatch([local], [{ ...local, max_computers: 2 }, pw]);
    expect(patch).toEqual({ browser: { backends: [{ ...local, max_computers: 2 }, pw] } });
    expect(SettingsPatch.safeParse(patch).error).toBeUndefined();
  });
});
