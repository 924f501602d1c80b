/**
 * `utcp-kit/internal`: helpers the package's own CLI, agent, MCP bridge and tools share. Not part of the public API:
 * names here may change in any release. Applications use the root entry (`utcp-kit`).
 */
export { UtcpClientBase } from './core/client.js';
export type { ClientDefaults } from './core/client.js';
export { loadConfig } from './core/config.js';
export type { LoadedConfig } from './core/config.js';
export { DEFAULT_LIMITS, resolveLimits } from './core/limits.js';
export { namespacedKey, sanitizeManualName } from './core/variables.js';
export { parseDotenv } from './core/dotenv.js';
export { assertUrlAllowed, isLoopbackLiteral, isLoopbackLike } from './core/url-policy.js';
