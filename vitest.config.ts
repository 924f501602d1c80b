import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Three workers on two cores: many tests wait on child processes and servers (measured 185 s against 230 s with two).
    maxWorkers: 3,
    // Each worker process runs its files one after another with one module cache, instead of a fresh process per
    // file that imports vitest, undici, Ajv, the MCP SDK... again: test/core + test/agent took 28.6 CPU-s isolated and
    // 11.6 CPU-s so. Test files therefore restore what they change (process.env, fake timers, spies, vi.doMock) and
    // keep no state in modules they share (docs/design/testing.md#one-module-cache-per-worker).
    isolate: false,
  },
});
