/**
 * `utcp-kit/internal`: helpers the package's own CLI, agent, MCP bridge and tools share (the deadline helper,
 * config, limits, URL policy, logger), light to import; the HTTP exchange and pools, which load undici, are in
 * `utcp-kit/internal/http` (docs/design/http-exchange.md#internal).
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
export { didYouMean } from './core/suggest.js';
export { errorMessage, isPlainObject } from './core/guards.js';
export { completeLogger } from './core/logger.js';
export { assertUrlAllowed, isLoopbackLiteral, isLoopbackLike } from './core/url-policy.js';
export {
  Deadline,
  abortError,
  createDeadline,
  idleTimer,
  isTimeoutReason,
  onAbort,
  raceAbort,
  raceSignal,
  settleError,
  settledWithin,
  sleep,
  throwIfAborted,
  withTimeout,
  type IdleTimer,
  type TimeoutScope,
} from './core/deadline.js';
export type { Limits } from './core/limits.js';
export {
  TOOL_RETRY_CHANNEL,
  TRACE_CHANNELS,
  errorType,
  openTrace,
  traceIterable,
  tracing,
  type Trace,
  type TraceAttributes,
  type TraceKind,
  type TraceStart,
} from './core/tracing.js';
export { signalProcessGroup } from './process/process-group.js';
export { environValue, readProcTable, type ProcEntry } from './process/proc-table.js';
export { buildChildEnv, DEFAULT_UNIX_ALLOWLIST } from './process/child-env.js';
export { destroyBody, readBodyCapped, type ResponseBody } from './http/http-body.js';
export { isLoopbackAddress, type LookupFunction } from './net/dial-guard.js';
export {
  compileLinearRegex,
  compileUntrustedRegex,
  loadLinearRegex,
  type LinearRegex,
  type LinearRegexResult,
} from './core/linear-regex.js';
