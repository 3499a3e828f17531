import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/main/core/config.js';

function configFile(values: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'benchtop-config-')), 'config.json');
  writeFileSync(path, typeof values === 'string' ? values : JSON.stringify(values));
  return path;
}

describe('settings', () => {
  it('has the documented defaults', () => {
    const settings = resolveSettings({ stored: {}, env: {} });
    expect(settings.server).toEqual({
      host: '127.0.0.1',
      port: 4422,
      allowed_hosts: ['localhost', '127.0.0.1'],
      cors_origins: [],
    });
    expect(settings.browser).toEqual({
      executable_path: null,
      headless: true,
      warm_pool: 2,
      backends: [{ name: 'local', type: 'local', max_computers: 20 }],
    });
    expect(settings.limits.max_tabs).toBe(20);
    expect(settings.exec.enabled).toBe(true);
    expect(settings.models.default).toBe('tzafon.northstar-cua-fast');
  });

  it('layers store ← BENCHTOP_CONFIG ← BENCHTOP_* ← flags, last wins', () => {
    const file = configFile({ server: { port: 5000, host: '127.0.0.2' }, limits: { max_tabs: 7 } });
    const stored = {
      server: { port: 4000 },
      limits: { burst: 9, max_tabs: 3 },
      exec: { enabled: false },
    };
    const env = { BENCHTOP_CONFIG: file, BENCHTOP_PORT: '6000', BENCHTOP_BROWSER_WARM_POOL: '0' };
    const settings = resolveSettings({ stored, env, flags: { server: { port: 7000 } } });
    expect(settings.server.port).toBe(7000);
    expect(settings.server.host).toBe('127.0.0.2');
    expect(settings.limits).toMatchObject({ burst: 9, max_tabs: 7 });
    expect(settings.exec.enabled).toBe(false);
    expect(settings.browser.warm_pool).toBe(0);
    expect(resolveSettings({ stored, env }).server.port).toBe(6000);
  });

  it('reads BENCHTOP_<SECTION>_<KEY> variables as JSON when they parse', () => {
    const settings = resolveSettings({
      stored: {},
      env: {
        BENCHTOP_HOST: '0.0.0.0',
        BENCHTOP_SERVER_ALLOWED_HOSTS: '["box.local"]',
        BENCHTOP_EXEC_ENABLED: 'false',
        BENCHTOP_BROWSER_EXECUTABLE_PATH: '/opt/chrome',
      },
    });
    expect(settings.server.host).toBe('0.0.0.0');
    expect(settings.server.allowed_hosts).toEqual(['box.local']);
    expect(settings.exec.enabled).toBe(false);
    expect(settings.browser.executable_path).toBe('/opt/chrome');
  });

  it.each([
    [{ stored: { server: { prot: 1 } } }, /unknown setting server\.prot in the settings store/],
    [{ stored: { nonsense: {} } }, /unknown setting nonsense/],
    [
      { stored: { browser: { warm_pool: 'two' } } },
      /setting browser\.warm_pool in the settings store/,
    ],
    [
      { stored: {}, flags: { server: { port: Number('abc') } } },
      /setting server\.port in command-line flags/,
    ],
    [
      { stored: {}, env: { BENCHTOP_LIMITS_MAX_TABZ: '3' } },
      /unknown variable BENCHTOP_LIMITS_MAX_TABZ/,
    ],
    [{ stored: {}, env: { BENCHTOP_PORT: '-1' } }, /setting server\.port in BENCHTOP_\* variables/],
    [
      { stored: {}, env: { BENCHTOP_CONFIG: '/nonexistent/benchtop.json' } },
      /cannot read BENCHTOP_CONFIG file/,
    ],
  ])('refuses bad settings naming the key (%#)', (options, message) => {
    expect(() => resolveSettings({ env: {}, ...options })).toThrow(message);
  });

  it('reads an empty BENCHTOP_CONFIG file as no settings, as an empty config.json', () => {
    const defaults = resolveSettings({ stored: {}, env: {} });
    for (const text of ['', '\n']) {
      expect(resolveSettings({ stored: {}, env: { BENCHTOP_CONFIG: configFile(text) } })).toEqual(
        defaults,
      );
    }
  });

  it('names the file when BENCHTOP_CONFIG is not JSON or has a bad key', () => {
    expect(() =>
      resolveSettings({ stored: {}, env: { BENCHTOP_CONFIG: configFile('{nope') } }),
    ).toThrow(/is not valid JSON/);
    const bad = configFile({ proxy: { advanced_proxy_url: 5 } });
    expect(() => resolveSettings({ stored: {}, env: { BENCHTOP_CONFIG: bad } })).toThrow(
      new RegExp(`setting proxy\\.advanced_proxy_url in BENCHTOP_CONFIG file ${bad}`),
    );
  });
});
