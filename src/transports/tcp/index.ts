/**
 * The `tcp` transport (docs/design/transports.md#tcp): one fresh connection per discovery or call, request
 * payloads from templates, six receive framings, and a timeout covering connect + whole read.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { TcpCallTemplate } from './template.js';
import { TcpTransport } from './tcp-transport.js';

export { TcpTransport } from './tcp-transport.js';

/** Creates the tcp transport of one client. */
export function createTcpTransport(ctx: TransportContext): Transport<TcpCallTemplate> {
  return new TcpTransport(ctx);
}
