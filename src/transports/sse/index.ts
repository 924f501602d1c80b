import type { Transport, TransportContext } from '../../core/transport.js';
import { unavailableTransport } from '../shared/unavailable.js';

export function createSseTransport(_ctx: TransportContext): Transport {
  return unavailableTransport('sse');
}
