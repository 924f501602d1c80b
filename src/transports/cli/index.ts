import type { Transport, TransportContext } from '../../core/transport.js';
import { unavailableTransport } from '../shared/unavailable.js';

export function createCliTransport(_ctx: TransportContext): Transport {
  return unavailableTransport('cli');
}
