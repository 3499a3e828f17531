#!/usr/bin/env node
// The headless CLI, as built to out/main/cli.js (`npm run build`; `npm start` builds when needed).
import { existsSync } from 'node:fs';

const cli = new URL('../out/main/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('benchtop: the app is not built; run `npm run build` first');
  process.exit(1);
}
await import(cli.href);
