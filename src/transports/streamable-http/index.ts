import type { Transport, TransportContext } from '../../core/transport.js';
import { unavailableTransport } from '../shared/unavailable.js';

export function createStreamableHttpTransport(_ctx: TransportContext): Transport {
  return unavailableTransport('streamable_http');
}
