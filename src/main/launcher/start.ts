import { join } from 'node:path';
import { launch, STOP_SIGNALS } from '../core/runtime/process-supervisor.js';
import { electronViteCli, findElectron, needsBuild } from './app-files.js';
import { planStart } from './start-plan.js';

/**
 * `npm start` (the window, or headless where it cannot open) and `npm run serve` (headless), run
 * built as out/main/launcher.js by bin/start.js: the repository is two folders up.
 */
const appDir = join(import.meta.dirname, '..', '..');

/**
 * Builds with electron-vite when out/ is older than src/; false if that was needed and failed.
 * This launcher keeps running as it was loaded; what it starts next is the new build.
 */
async function buildIfStale(): Promise<boolean> {
  if (!needsBuild(appDir)) return true;
  console.log('benchtop: building the app (out/ is missing or older than src/)');
  const cli = electronViteCli();
  if (!cli) {
    console.error('benchtop: electron-vite is not installed (npm ci installs it); not building');
    return false;
  }
  const build = await launch(process.execPath, [cli, 'build'], {
    cwd: appDir,
    stdio: 'inherit',
    group: false,
  });
  const { code } = await build.exited;
  return code === 0;
}

async function startHeadless(args: string[], reason: string | undefined): Promise<void> {
  if (reason) console.log(`benchtop: no window, because ${reason}; starting headless`);
  process.argv = [process.argv[0]!, process.argv[1]!, 'serve', ...args];
  await import('../cli.js');
}

async function startElectron(binary: string, args: string[], env: NodeJS.ProcessEnv) {
  // In this process's group: a terminal's Ctrl+C reaches it directly too.
  const electron = await launch(binary, args, { cwd: appDir, env, stdio: 'inherit', group: false });
  // Passed on (a terminal's Ctrl+C or hang-up reaches Electron twice, which it takes as one
  // quit); the app closes every computer and its exit ends this process.
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => electron.kill(signal));
  }
  const { code, signal } = await electron.exited;
  process.exit(code ?? (signal ? 1 : 0));
}

async function main(argv: string[]): Promise<void> {
  const headlessRequested = argv.includes('--headless');
  const args = argv.filter((arg) => arg !== '--headless');
  const built = await buildIfStale();
  const plan = planStart({
    platform: process.platform,
    env: process.env,
    electronBinary: findElectron(),
    uid: process.getuid?.(),
    headlessRequested,
    appDir,
  });
  if (plan.mode === 'headless') {
    if (!built) console.error('benchtop: the build failed; starting the previous build');
    return startHeadless(args, plan.reason);
  }
  if (!built) throw new Error('the app could not be built; fix `npm run build` and start again');
  for (const note of plan.notes) console.log(`benchtop: ${note}`);
  await startElectron(plan.binary, plan.args, plan.env);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`benchtop: ${(error as Error).message ?? String(error)}`);
  process.exit(1);
});
