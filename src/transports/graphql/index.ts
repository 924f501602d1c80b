import type { Transport, TransportContext } from '../../core/transport.js';
import { GraphqlTransport } from './graphql-transport.js';

export { GraphqlTransport, DEFAULT_GRAPHQL_TIMEOUT_MS } from './graphql-transport.js';
export { GraphqlError } from './graphql-error.js';

/** Creates the `graphql` transport for one client. */
export function createGraphqlTransport(ctx: TransportContext): Transport {
  return new GraphqlTransport(ctx);
}
