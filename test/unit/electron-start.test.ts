import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findElectron, needsBuild } from '../../src/main/launcher/app-files.js';
import {
  buildOutputs,
  hasDisplay,
  isBuildStale,
  planStart,
  type StartFacts,
} from '../../src/main/launcher/start-plan.js';

const repo = join(import.meta.dirname, '..', '..');
const temp = mkdtempSync(join(tmpdir(), 'benchtop-start-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const facts = (overrides: Partial<StartFacts> = {}): StartFacts => ({
  platform: 'linux',
  env: { DISPLAY: ':0', PATH: '/usr/bin' },
  electronBinary: '/app/node_modules/electron/dist/electron',
  uid: 1000,
  headlessRequested: false,
  appDir: '/app',
  ...overrides,
});

describe('npm start chooses the window or the headless server', () => {
  it('opens the window where Electron is installed and there is a display', () => {
    expect(planStart(facts())).toEqual({
      mode: 'electron',
      binary: '/app/node_modules/electron/dist/electron',
      args: ['/app'],
      env: { DISPLAY: ':0', PATH: '/usr/bin' },
      notes: [],
    });
    expect(planStart(facts({ env: { WAYLAND_DISPLAY: 'wayland-0' } })).mode).toBe('electron');
  });

  it('needs no DISPLAY on macOS or Windows', () => {
    expect(planStart(facts({ platform: 'darwin', env: {} })).mode).toBe('electron');
    expect(planStart(facts({ platform: 'win32', env: {}, uid: undefined })).mode).toBe('electron');
    expect(hasDisplay('freebsd', {})).toBe(false);
  });

  it('starts headless without the Electron binary, and says why', () => {
    const plan = planStart(facts({ electronBinary: undefined }));
    expect(plan).toEqual({
      mode: 'headless',
      reason: expect.stringMatching(/binary is not installed/),
    });
  });

  it('starts headless without a display on Linux, and says why', () => {
    for (const env of [{}, { DISPLAY: '' }, { WAYLAND_DISPLAY: '' }]) {
      const plan = planStart(facts({ env }));
      expect(plan).toEqual({ mode: 'headless', reason: expect.stringMatching(/no display/) });
    }
  });

  it('npm run serve is headless whatever the machine has', () => {
    expect(planStart(facts({ headlessRequested: true }))).toEqual({ mode: 'headless' });
  });

  it('as root on Linux the window runs without the process sandbox, and says so', () => {
    const plan = planStart(facts({ uid: 0 }));
    expect(plan).toMatchObject({ mode: 'electron', args: ['/app', '--no-sandbox'] });
    expect(plan.mode === 'electron' && plan.notes.join()).toMatch(/sandbox is off/);
    expect(planStart(facts({ platform: 'darwin', uid: 0 }))).toMatchObject({ args: ['/app'] });
  });

  it('never hands Electron ELECTRON_RUN_AS_NODE (it would run as plain Node)', () => {
    const plan = planStart(facts({ env: { DISPLAY: ':0', ELECTRON_RUN_AS_NODE: '1' } }));
    expect(plan.mode === 'electron' && plan.env).toEqual({ DISPLAY: ':0' });
  });

  it("finds Electron's binary only when the package has one", () => {
    const binary = join(temp, 'electron-binary');
    writeFileSync(binary, '');
    expect(findElectron(() => binary)).toBe(binary);
    expect(findElectron(() => join(temp, 'missing'))).toBeUndefined();
    expect(
      findElectron(() => {
        throw new Error('Electron failed to install correctly');
      }),
    ).toBeUndefined();
  });
});

describe('npm start builds first when out/ is missing or stale', () => {
  it('compares the oldest output with the newest source', () => {
    expect(isBuildStale([undefined, 5, 5], 1)).toBe(true);
    expect(isBuildStale([5, 3, 5], 4)).toBe(true);
    expect(isBuildStale([5, 6, 7], 4)).toBe(false);
  });

  it('reads the times from the files', () => {
    const app = join(temp, 'app');
    mkdirSync(join(app, 'src', 'main'), { recursive: true });
    const source = join(app, 'src', 'main', 'index.ts');
    writeFileSync(source, '');
    utimesSync(source, 1000, 1000);
    expect(needsBuild(app)).toBe(true);
    for (const output of buildOutputs(app)) {
      mkdirSync(join(output, '..'), { recursive: true });
      writeFileSync(output, '');
      utimesSync(output, 2000, 2000);
    }
    expect(needsBuild(app)).toBe(false);
    utimesSync(source, 3000, 3000);
    expect(needsBuild(app)).toBe(true);
  });
});

/** Runs bin/start.js as `npm start` does; returns its exit and everything it printed. */
function runStart(args: string[], env: NodeJS.ProcessEnv, untilLine?: RegExp) {
  const child = spawn(process.execPath, [join(repo, 'bin', 'start.js'), ...args], {
    cwd: repo,
    env,
  });
  let output = '';
  const line = new Promise<string>((resolve) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = untilLine && untilLine.exec(output);
      if (match) resolve(match[0]);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, line, exit, output: () => output };
}

// Against the built app: a stale out/ would make the launcher rebuild it under other tests' feet.
describe.skipIf(needsBuild(repo))('the launcher, run for real', () => {
  const {
    DISPLAY: _d,
    WAYLAND_DISPLAY: _w,
    ELECTRON_OVERRIDE_DIST_PATH: _o,
    ...baseEnv
  } = process.env;

  it('starts Electron on the app with the right arguments and exits with its status', async () => {
    // The electron package honours ELECTRON_OVERRIDE_DIST_PATH: a stand-in records its call.
    const dist = join(temp, 'fake-electron');
    mkdirSync(dist, { recursive: true });
    const record = join(dist, 'record.txt');
    const script = `#!/bin/sh\nprintf '%s\\n' "$@" "run-as-node=$ELECTRON_RUN_AS_NODE" > '${record}'\nexit 7\n`;
    writeFileSync(join(dist, 'electron'), script);
    chmodSync(join(dist, 'electron'), 0o755);
    const run = runStart([], {
      ...baseEnv,
      DISPLAY: ':0',
      ELECTRON_OVERRIDE_DIST_PATH: dist,
      ELECTRON_RUN_AS_NODE: '1',
    });
    expect(await run.exit).toBe(7);
    const expected = [repo, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), 'run-as-node='];
    expect(readFileSync(record, 'utf8').trim().split('\n')).toEqual(expected);
  });

  it('without a display it serves headless and prints the /ui/ link', async () => {
    const run = runStart(
      ['--port', '0'],
      {
        ...baseEnv,
        ELECTRON_OVERRIDE_DIST_PATH: join(temp, 'fake-electron'),
        BENCHTOP_DATA_DIR: join(temp, 'data'),
      },
      /the window: (http:\/\/\S+\/ui\/)#key=sk_\S+/,
    );
    const link = await Promise.race([run.line, run.exit.then(() => run.output())]);
    expect(run.output()).toMatch(/no window, because there is no display/);
    const ui = await fetch(/the window: (\S+)#/.exec(link)![1]!);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<html/i);
    run.child.kill('SIGINT');
    const code = await run.exit;
    expect(code, run.output()).toBe(0);
  });
});
