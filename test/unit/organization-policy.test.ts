import { describe, expect, it } from 'vitest';
import { Settings, type SettingsInput } from '../../src/shared/settings.js';
import { OrganizationPolicy, hostEnv } from '../../src/main/core/sandbox/organization-policy.js';
import type { SandboxSupport } from '../../src/main/core/sandbox/computer-sandbox.js';
import { xauthority } from '../../src/main/core/computers/desktop/x-display.js';

const missing: SandboxSupport = { available: false, reason: 'bubblewrap is not installed' };
const present: SandboxSupport = { available: true };

function policy(settings: SettingsInput, support: SandboxSupport = present) {
  const parsed = Settings.parse(settings);
  return new OrganizationPolicy(
    () => parsed,
    '/nonexistent',
    () => Promise.resolve(support),
  );
}

const codeOf = (work: () => unknown) => {
  try {
    work();
    return 'allowed';
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('what an organization may do', () => {
  it('the owner runs commands unless exec is off; others only when their entry allows it', () => {
    const rules = policy({ organizations: { acme: { exec: true } } });
    expect(codeOf(() => rules.checkExec('local'))).toBe('allowed');
    expect(codeOf(() => rules.checkExec('acme'))).toBe('allowed');
    expect(codeOf(() => rules.checkExec('globex'))).toBe('exec_disabled');
    const off = policy({ exec: { enabled: false }, organizations: { acme: { exec: true } } });
    expect(codeOf(() => off.checkExec('local'))).toBe('exec_disabled');
    expect(codeOf(() => off.checkExec('acme'))).toBe('exec_disabled');
  });

  it('desktops and the real screen', () => {
    const rules = policy({ organizations: { acme: { desktops: true } } });
    expect(codeOf(() => rules.checkCreate('globex', 'browser', false))).toBe('allowed');
    expect(codeOf(() => rules.checkCreate('globex', 'desktop', false))).toBe('forbidden');
    expect(codeOf(() => rules.checkCreate('acme', 'desktop', false))).toBe('allowed');
    expect(codeOf(() => rules.checkCreate('acme', 'desktop', true))).toBe('forbidden');
    expect(codeOf(() => rules.checkCreate('local', 'desktop', true))).toBe('allowed');
  });

  it('sandboxes everyone where it can; without one, only the owner runs on the host', async () => {
    expect(await policy({}).sandboxed('local', 'desktop')).toBe(true);
    expect(await policy({}).sandboxed('acme', 'browser')).toBe(true);
    expect(await policy({ exec: { sandbox_owner: false } }).sandboxed('local', 'browser')).toBe(
      false,
    );
    expect(await policy({}, missing).sandboxed('local', 'desktop')).toBe(false);
    expect(await policy({}, missing).sandboxed('acme', 'browser')).toBe(false);
    await expect(policy({}, missing).sandboxed('acme', 'desktop')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('bubblewrap is not installed'),
    });
  });

  it("refuses another organization's commands on a computer made without a sandbox", async () => {
    const computer = {
      id: 'comp_1',
      org: 'acme',
      spec: { workspace: '/nonexistent', sandboxed: false },
      ended: new AbortController(),
    };
    await expect(policy({}, missing).sandboxOf(computer)).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(await policy({}, missing).sandboxOf({ ...computer, org: 'local' })).toBeUndefined();
  });
});

describe("a host command's environment", () => {
  it("has neither Benchtop's variables nor the provider keys it reads", () => {
    process.env.BENCHTOP_API_KEY = 'sk_secret';
    process.env.BT_UNIT_PROVIDER_KEY = 'provider-secret';
    process.env.BT_UNIT_OTHER = 'kept';
    try {
      const env = hostEnv(
        Settings.parse({
          models: { providers: { m: { provider: 'openai', api_key_env: 'BT_UNIT_PROVIDER_KEY' } } },
        }),
      );
      expect(env.BENCHTOP_API_KEY).toBeUndefined();
      expect(env.BT_UNIT_PROVIDER_KEY).toBeUndefined();
      expect(env.BT_UNIT_OTHER).toBe('kept');
    } finally {
      delete process.env.BENCHTOP_API_KEY;
      delete process.env.BT_UNIT_PROVIDER_KEY;
      delete process.env.BT_UNIT_OTHER;
    }
  });
});

describe('an X cookie file', () => {
  it('holds one MIT-MAGIC-COOKIE-1 entry for any address and display', () => {
    const cookie = Buffer.alloc(16, 7);
    const file = xauthority(cookie);
    // family 0xffff, empty address, empty number, the name, the cookie: 2+2+2+(2+18)+(2+16).
    expect(file).toHaveLength(44);
    expect(file.readUInt16BE(0)).toBe(0xffff);
    expect(file.readUInt16BE(2)).toBe(0);
    expect(file.readUInt16BE(4)).toBe(0);
    expect(file.readUInt16BE(6)).toBe(18);
    expect(file.toString('latin1', 8, 26)).toBe('MIT-MAGIC-COOKIE-1');
    expect(file.readUInt16BE(26)).toBe(16);
    expect(file.subarray(28)).toEqual(cookie);
  });
});
