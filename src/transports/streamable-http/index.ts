/**
 * The `streamable_http` transport (docs/design/transports.md#streamable-http): chunked HTTP responses streamed as NDJSON
 * lines, JSON values, SSE events or byte chunks.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { StreamableHttpCallTemplate } from './template.js';
import { StreamableHttpTransport } from './streamable-http-transport.js';

export { StreamableHttpTransport } from './streamable-http-transport.js';

/** Creates the `streamable_http` transport for one client. */
export function createStreamableHttpTransport(ctx: TransportContext): Transport<StreamableHttpCallTemplate> {
  return new StreamableHttpTransport(ctx);
}
