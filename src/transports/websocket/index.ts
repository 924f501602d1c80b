/**
 * The `websocket` transport (docs/design/transports.md#websocket): pooled persistent connections per
 * (manual, url, protocol), discovery by message, message templates, request-id correlation,
 * `first_message` / `until_close` responses and streaming until `stream_end`, `complete` or close.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { WebSocketCallTemplate } from './template.js';
import { WebSocketTransport } from './websocket-transport.js';

export { WebSocketTransport } from './websocket-transport.js';

/** Creates the websocket transport of one client; `ws` is imported on the first connection. */
export function createWebSocketTransport(ctx: TransportContext): Transport<WebSocketCallTemplate> {
  return new WebSocketTransport(ctx);
}
