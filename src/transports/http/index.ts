import type { Transport, TransportContext } from '../../core/transport.js';
import { unavailableTransport } from '../shared/unavailable.js';

export function createHttpTransport(_ctx: TransportContext): Transport {
  return unavailableTransport('http');
}
