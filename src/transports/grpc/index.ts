import type { Transport, TransportContext } from '../../core/transport.js';
import { GrpcTransport } from './grpc-transport.js';

export { GrpcTransport, DEFAULT_GRPC_TIMEOUT_MS } from './grpc-transport.js';
export { GrpcError } from './grpc-error.js';
export { UTCP_SERVICE_PROTO, UTCP_SERVICE_NAME } from './embedded-protos.js';

/** Creates the `grpc` transport for one client. */
export function createGrpcTransport(ctx: TransportContext): Transport {
  return new GrpcTransport(ctx);
}
