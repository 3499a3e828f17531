#!/usr/bin/env node
// `npm start`: the desktop app where Electron can run, else the headless server (`--headless`
// always). Builds out/ first when it is missing or older than src/. See src/main/launcher.
import { register } from 'tsx/esm/api';

register();
await import('../src/main/launcher/start.ts');
