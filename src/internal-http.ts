/**
 * `utcp-kit/internal/http`: the network path's building blocks (the one HTTP exchange, the document download, the
 * `fetch` adapter, the connection pool), for the package's own CLI and agent (docs/design/http-exchange.md#internal).
 * Separate from `utcp-kit/internal` because it loads undici: importing it costs about 50-130 ms, which a CLI command
 * or an MCP bridge on local manuals never needs. EXPLICITLY INTERNAL, not part of the public API.
 */
export {
  CROSS_ORIGIN_SAFE_HEADERS,
  fetchDocument,
  httpExchange,
  networkError,
  type BufferedExchangeOptions,
  type BufferedHttpResponse,
  type DispatcherChoice,
  type FetchDocumentOptions,
  type HttpExchangeOptions,
  type HttpExchangeRequest,
  type HttpExchangeResponse,
  type StreamExchangeOptions,
  type StreamedHttpResponse,
} from './http/http-exchange.js';
export { exchangeFetch, type ExchangeFetchOptions, type FetchFunction } from './http/http-fetch.js';
import { RoutingDispatcher, type RoutingDispatcherOptions } from './http/http-dispatcher.js';
export { RoutingDispatcher, type RoutingDispatcherOptions };

/**
 * A dispatcher like the client's own: keep-alive pool, HTTPS_PROXY/HTTP_PROXY/NO_PROXY with loopback
 * always direct, a per-origin connection cap (default 64), optional dial guard (`remote`).
 * Close it with `destroy()` when done.
 */
export function createHttpDispatcher(options: RoutingDispatcherOptions = {}): RoutingDispatcher {
  return new RoutingDispatcher({ connections: 64, ...options });
}
