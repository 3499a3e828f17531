import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type BrowserContext, type BrowserContextOptions } from 'playwright-core';
import { unavailable } from '../../errors.js';
import {
  detectChromiumSandbox,
  firstLine,
  LAUNCH_ARGS,
  type BrowserHost,
  type ComputerContextOptions,
  type FreshContext,
} from './browser-host.js';
import { findChromium, INSTALL_HINT, requireChromium } from './find-chromium.js';

type StorageState = Exclude<BrowserContextOptions['storageState'], string | undefined>;

/** How long Chromium gets to say which port it listens on once Playwright holds it. */
const PORT_FILE_TIMEOUT_MS = 5000;

export type CdpBrowser = FreshContext & {
  /** Its webSocketDebuggerUrl: ws://127.0.0.1:PORT/devtools/browser/… */
  browserUrl: string;
};

/**
 * The Chromium of a computer created with cdp: a browser of its own whose default context is the
 * computer, so a CDP client attached to it sees this computer's pages and nothing else, and a
 * page it opens lands in the context Benchtop follows (tabs, events, recording). Launched as the
 * shared browser is, plus a debugging port Chromium picks itself on 127.0.0.1 (no race for a
 * free port) and reports in DevToolsActivePort. Playwright still drives it through its pipe:
 * when Benchtop dies, even by SIGKILL, the pipe closes and Chromium exits with it.
 */
export async function launchCdpBrowser(
  host: BrowserHost,
  userDataDir: string,
  options: ComputerContextOptions & { storageState?: StorageState },
): Promise<CdpBrowser> {
  const { initScripts = [], storageState, ...contextOptions } = options;
  const executablePath = findChromium(host.settings.executable_path, process.env, {
    headless: host.settings.headless,
  });
  requireChromium(executablePath, unavailable);
  await mkdir(userDataDir, { recursive: true, mode: 0o700 });
  const launch = (sandbox: boolean) =>
    chromium.launchPersistentContext(userDataDir, {
      ...contextOptions,
      executablePath,
      headless: host.settings.headless,
      args: [...LAUNCH_ARGS, '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0'],
      tracesDir: host.tracesDir,
      chromiumSandbox: sandbox,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  let context: BrowserContext;
  try {
    const sandbox = detectChromiumSandbox(executablePath).enabled;
    // As for the shared browser: facts that misled about the sandbox do not stop the computer.
    context = await launch(sandbox).catch((error: unknown) => {
      if (!sandbox) throw error;
      return launch(false).catch(() => {
        throw error;
      });
    });
  } catch (error) {
    throw unavailable(
      `Chromium at ${executablePath} could not start (${firstLine(error)}); ${INSTALL_HINT}`,
    );
  }
  try {
    for (const script of initScripts) await context.addInitScript(script);
    if (storageState) await context.setStorageState(storageState);
    const page = context.pages()[0] ?? (await context.newPage());
    return { context, page, browserUrl: await readBrowserUrl(userDataDir) };
  } catch (error) {
    await context.close().catch(() => {});
    throw unavailable(`the computer's Chromium did not get ready (${firstLine(error)})`, error);
  }
}

/** Chromium writes its port and browser path there once it listens. */
async function readBrowserUrl(userDataDir: string): Promise<string> {
  const deadline = Date.now() + PORT_FILE_TIMEOUT_MS;
  for (;;) {
    const text = await readFile(join(userDataDir, 'DevToolsActivePort'), 'utf8').catch(() => '');
    const [port, path] = text.trim().split('\n');
    if (port && path?.startsWith('/devtools/browser/')) return `ws://127.0.0.1:${port}${path}`;
    if (Date.now() > deadline) throw new Error('Chromium did not report its debugging port');
    await sleep(20);
  }
}
