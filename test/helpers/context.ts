/** A TransportContext for testing one transport directly, without a client. */
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { TransportContext } from '../../src/core/transport.js';

export function createTestContext(
  overrides: Partial<TransportContext> = {},
): TransportContext & { disposeShared(): Promise<void> } {
  const shared = new Map<string, { value: unknown; dispose?: (v: any) => void | Promise<void> }>();
  return {
    rootDir: process.cwd(),
    logger: {},
    limits: { ...DEFAULT_LIMITS },
    convertOpenApi: async () => {
      throw new Error('convertOpenApi not wired in this test context');
    },
    callables: new Map(),
    shared<V>(key: string, create: () => V, dispose?: (value: V) => void | Promise<void>): V {
      if (!shared.has(key)) shared.set(key, { value: create(), dispose });
      return shared.get(key)!.value as V;
    },
    requestRefresh() {},
    async disposeShared() {
      for (const { value, dispose } of shared.values()) await dispose?.(value);
      shared.clear();
    },
    ...overrides,
  };
}
