import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Store and HTTP suites open real databases and servers; keep parallelism modest on 2 cores.
    maxWorkers: 2,
  },
});
