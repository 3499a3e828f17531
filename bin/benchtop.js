#!/usr/bin/env node
// Runs the TypeScript CLI directly, so a clone works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main/cli.ts');
