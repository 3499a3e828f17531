import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each integration file starts its own server and Chromium; two cores, so two at a time.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit and integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The UI's tests run last and alone: they measure the live view's frame rate, which
        // another file's Chromium on the same two cores would halve.
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
