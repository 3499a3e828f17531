import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

type Env = Record<string, string | undefined>;

function systemCandidates(env: Env): string[] {
  if (process.platform === 'darwin') {
    return [
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    ];
  }
  if (process.platform === 'win32') {
    const roots = [env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter(
      Boolean,
    ) as string[];
    return roots.flatMap((root) => [
      join(root, 'Google', 'Chrome', 'Application', 'chrome.exe'),
      join(root, 'Chromium', 'Application', 'chrome.exe'),
      join(root, 'Microsoft', 'Edge', 'Application', 'msedge.exe'),
    ]);
  }
  return [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/snap/bin/chromium',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/microsoft-edge',
  ];
}

function playwrightInstalled(): string | undefined {
  try {
    return chromium.executablePath();
  } catch {
    return undefined;
  }
}

/**
 * Chromium's headless shell (Debian: chromium-headless-shell; its binary, as /usr/bin's script
 * stays beside it as a process of its own), for browsers nobody sees: it has no browser window to
 * draw. Ten contexts on a two-core machine, against the full Chromium of the same version run
 * headless: newContext+newPage 160 against 330–420 ms, half the CPU, 336 against 528 MB, a
 * screenshot 83 against 105–117 ms.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

/**
 * The Chromium to run, in the order the README gives: setting, BENCHTOP_CHROMIUM, then for a
 * headless browser the system's headless shell, then Playwright's own browsers, then the
 * system's Chrome / Chromium / Edge. Undefined when there is none.
 */
export function findChromium(
  setting: string | null,
  env: Env = process.env,
  options: { headless?: boolean } = {},
): string | undefined {
  if (setting) return setting;
  if (env.BENCHTOP_CHROMIUM) return env.BENCHTOP_CHROMIUM;
  const shell = options.headless && process.platform === 'linux' ? [HEADLESS_SHELL] : [];
  return [...shell, playwrightInstalled(), ...systemCandidates(env)].find(
    (path): path is string => !!path && existsSync(path),
  );
}

export const INSTALL_HINT =
  process.platform === 'linux'
    ? 'install Chromium (Debian/Ubuntu: apt-get install chromium) or set browser.executable_path'
    : 'install Google Chrome or Chromium, or set browser.executable_path';

/**
 * Throws `fail(message)` when no Chromium can start from `executablePath`: none was found, or
 * none is there.
 */
export function requireChromium(
  executablePath: string | undefined,
  fail: (message: string) => Error,
): asserts executablePath is string {
  if (!executablePath) throw fail(`No Chromium found: ${INSTALL_HINT}`);
  if (!existsSync(executablePath)) {
    throw fail(`Chromium not found at ${executablePath}: ${INSTALL_HINT}`);
  }
}
