import { describe, expect, it } from 'vitest';
import {
  chromiumSandbox,
  type SandboxFacts,
} from '../../src/main/core/computers/browser/browser-host.js';

const linux: SandboxFacts = {
  platform: 'linux',
  uid: 1000,
  userNamespaces: true,
  setuidSandbox: false,
};

describe('chromiumSandbox', () => {
  it('is on for an ordinary user who may create user namespaces', () => {
    expect(chromiumSandbox(linux)).toEqual({
      enabled: true,
      reason: 'Chromium sandbox (user namespaces)',
    });
  });

  it('is off for root, whatever the kernel allows: Chromium refuses its sandbox to root', () => {
    for (const facts of [
      { ...linux, uid: 0 },
      { ...linux, uid: 0, setuidSandbox: true },
      { ...linux, uid: 0, userNamespaces: false },
    ]) {
      const decision = chromiumSandbox(facts);
      expect(decision.enabled).toBe(false);
      expect(decision.reason).toContain('root');
    }
  });

  it('uses the setuid helper where user namespaces are not allowed', () => {
    expect(chromiumSandbox({ ...linux, userNamespaces: false, setuidSandbox: true })).toEqual({
      enabled: true,
      reason: 'Chromium sandbox (setuid chrome-sandbox)',
    });
  });

  it('is off, saying what to change, with neither user namespaces nor the helper', () => {
    const decision = chromiumSandbox({ ...linux, userNamespaces: false });
    expect(decision.enabled).toBe(false);
    expect(decision.reason).toContain('user namespaces');
    expect(decision.reason).toContain('apparmor_restrict_unprivileged_userns');
  });

  it("is on off Linux, where Chromium's sandbox needs nothing from the system", () => {
    for (const platform of ['darwin', 'win32'] as const) {
      const facts = { platform, uid: undefined, userNamespaces: false, setuidSandbox: false };
      expect(chromiumSandbox(facts).enabled).toBe(true);
    }
  });
});
