import type { Transport, TransportContext } from '../../core/transport.js';
import { unavailableTransport } from '../shared/unavailable.js';

export function createMcpTransport(_ctx: TransportContext): Transport {
  return unavailableTransport('mcp');
}
