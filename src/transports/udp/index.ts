/**
 * The `udp` transport (docs/design/transports.md#udp): one datagram out, up to `number_of_response_datagrams`
 * replies back from the target address only, then decode; a fresh socket per discovery or call.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { UdpCallTemplate } from './template.js';
import { UdpTransport } from './udp-transport.js';

export { UdpTransport } from './udp-transport.js';

/** Creates the udp transport of one client. */
export function createUdpTransport(ctx: TransportContext): Transport<UdpCallTemplate> {
  return new UdpTransport(ctx);
}
