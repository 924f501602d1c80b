/** The `text` transport: the manual is inline `content` (a UTCP manual or an OpenAPI document). */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { TextCallTemplate } from './template.js';
import { TextTransport } from './text-transport.js';

export { TextTransport } from './text-transport.js';

/** Creates the `text` transport for one client. */
export function createTextTransport(ctx: TransportContext): Transport<TextCallTemplate> {
  return new TextTransport(ctx);
}
