/** The `file` transport: a manual or OpenAPI document read from a file confined to the client's root dir. */
import type { Transport, TransportContext } from '../../core/transport.js';
import type { FileCallTemplate } from './template.js';
import { FileTransport } from './file-transport.js';

export { FileTransport } from './file-transport.js';

/** Creates the `file` transport for one client. */
export function createFileTransport(ctx: TransportContext): Transport<FileCallTemplate> {
  return new FileTransport(ctx);
}
