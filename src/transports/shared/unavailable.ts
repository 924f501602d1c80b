import { UtcpError } from '../../core/errors.js';
import type { Transport } from '../../core/transport.js';

/** A transport this version does not ship yet: every operation throws NOT_SUPPORTED with a clear message. */
export function unavailableTransport(type: string): Transport {
  const fail = (): never => {
    throw new UtcpError('NOT_SUPPORTED', `The "${type}" transport is not available in this version of utcp-kit`);
  };
  return {
    type,
    registerManual: async () => fail(),
    callTool: async () => fail(),
    close: async () => {},
  };
}
