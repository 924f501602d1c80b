import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Three workers on two cores: many tests wait on child processes and servers (measured 185 s against 230 s with two).
    maxWorkers: 3,
  },
});
