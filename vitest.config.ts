import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    globalSetup: ['test/global-setup.ts'],
    hookTimeout: 60_000,
    // Each integration file starts its own server and Chromium; two cores, so two at a time.
    maxWorkers: 2,
    fileParallelism: true,
    projects: [
      {
        // Unit tests share their worker's modules: each file's own would cost more to load
        // (playwright-core, express, zod…) than its tests take to run. They use fakes, start
        // no server and leave nothing running.
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', 'test/e2e/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The UI's tests run last, two files at a time as ever but beside no other file: they
        // measure the live view's frame rate, which a third Chromium on the same two cores
        // would lower.
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
