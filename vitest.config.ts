import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each integration file starts its own server and Chromium; two cores, so two at a time.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
