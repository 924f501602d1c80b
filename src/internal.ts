/**
 * `utcp-kit/internal`: helpers the package's own CLI, agent, MCP bridge and tools share, and the building
 * blocks of the network path (the deadline helper and the HTTP exchange, docs/design/http-exchange.md#internal).
 * EXPLICITLY INTERNAL, not part of the public API: names here may change in any release. Applications use the
 * root entry (`utcp-kit`).
 */
export { UtcpClientBase } from './core/client.js';
export type { ClientDefaults } from './core/client.js';
export { loadConfig } from './core/config.js';
export type { LoadedConfig } from './core/config.js';
export { DEFAULT_LIMITS, resolveLimits } from './core/limits.js';
export { namespacedKey, sanitizeManualName } from './core/variables.js';
export { parseDotenv } from './core/dotenv.js';
export { completeLogger } from './core/logger.js';
export { assertUrlAllowed, isLoopbackLiteral, isLoopbackLike } from './core/url-policy.js';
export {
  Deadline,
  abortError,
  createDeadline,
  isTimeoutReason,
  raceSignal,
  settleError,
  throwIfAborted,
  withTimeout,
  type TimeoutScope,
} from './core/deadline.js';
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
} from './transports/shared/http-exchange.js';
export { exchangeFetch, type ExchangeFetchOptions, type FetchFunction } from './transports/shared/http-fetch.js';
export type { Limits } from './core/limits.js';
export { destroyBody, readBodyCapped, type ResponseBody } from './transports/shared/http-body.js';
export { isLoopbackAddress, type LookupFunction } from './transports/shared/dial-guard.js';
import { RoutingDispatcher, type RoutingDispatcherOptions } from './transports/shared/http-dispatcher.js';
export { RoutingDispatcher, type RoutingDispatcherOptions };

/**
 * A dispatcher like the client's own: keep-alive pool, HTTPS_PROXY/HTTP_PROXY/NO_PROXY with loopback
 * always direct, a per-origin connection cap (default 64), optional dial guard (`remote`).
 * Close it with `destroy()` when done.
 */
export function createHttpDispatcher(options: RoutingDispatcherOptions = {}): RoutingDispatcher {
  return new RoutingDispatcher({ connections: 64, ...options });
}
