#!/usr/bin/env node
// `npm start`: the desktop app where Electron can run, else the headless server (`--headless`
// always). Runs the built launcher (src/main/launcher), which rebuilds out/ when it is older than
// src/; on a clean clone there is no launcher yet, so the app is built first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const appDir = fileURLToPath(new URL('..', import.meta.url));
const launcher = join(appDir, 'out', 'main', 'launcher.js');

if (!existsSync(launcher)) {
  console.log('benchtop: building the app (out/ is missing)');
  let electronVite;
  try {
    const manifest = createRequire(import.meta.url).resolve('electron-vite/package.json');
    electronVite = join(dirname(manifest), 'bin', 'electron-vite.js');
  } catch {
    console.error('benchtop: electron-vite is not installed (npm ci installs it); cannot build');
    process.exit(1);
  }
  const build = spawnSync(process.execPath, [electronVite, 'build'], {
    cwd: appDir,
    stdio: 'inherit',
  });
  if (build.status !== 0) {
    console.error('benchtop: the build failed; fix `npm run build` and start again');
    process.exit(1);
  }
}
await import(pathToFileURL(launcher).href);
