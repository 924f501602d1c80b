/** The `direct` transport: in-process functions registered on this client, so agents mix local and remote tools. */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { DirectCallTemplate } from './template.js';
import { DirectTransport } from './direct-transport.js';

export { DirectTransport } from './direct-transport.js';

/** Creates the `direct` transport for one client. */
export function createDirectTransport(ctx: TransportContext): Transport<DirectCallTemplate> {
  return new DirectTransport(ctx);
}
