/**
 * The `http` transport (docs/design/transports.md#http): discovery of UTCP manuals and OpenAPI specs,
 * and tool calls on the client's shared undici dispatcher.
 */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { HttpCallTemplate } from './template.js';
import { HttpTransport } from './http-transport.js';

export { HttpTransport } from './http-transport.js';

/** Creates the `http` transport for one client. */
export function createHttpTransport(ctx: TransportContext): Transport<HttpCallTemplate> {
  return new HttpTransport(ctx);
}
