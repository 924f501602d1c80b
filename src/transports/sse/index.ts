/**
 * The `sse` transport (docs/design/transports.md#sse): server-sent event streams, parsed incrementally and
 * yielded as they arrive, with reconnection for GET streams.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { SseCallTemplate } from './template.js';
import { SseTransport } from './sse-transport.js';

export { SseTransport } from './sse-transport.js';

/** Creates the `sse` transport for one client. */
export function createSseTransport(ctx: TransportContext): Transport<SseCallTemplate> {
  return new SseTransport(ctx);
}
