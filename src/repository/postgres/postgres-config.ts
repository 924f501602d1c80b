/**
 * The `tool_repository` config of the Postgres repository (docs/design/repository-postgres.md#config), checked without
 * loading any driver:
 *   { "tool_repository_type": "postgres", "connection_string": "${DATABASE_URL}", "schema"?, "discovery_ttl_seconds"?, "pool_max"? }
 *   { "tool_repository_type": "pglite", "data_dir"?, "schema"?, "discovery_ttl_seconds"? }
 */
import { isAbsolute, resolve } from 'node:path';
import { UtcpValidationError, type ValidationIssue } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { PgliteDriverOptions } from './driver.js';

/** How long a stored manual is reused before discovering again, unless configured. */
export const DEFAULT_DISCOVERY_TTL_MS = 3_600_000;

/** The options of `PostgresToolRepository` (here, so the config check and the repository share them without a circle). */
export interface PostgresToolRepositoryOptions {
  /** `postgres://…` of a PostgreSQL server. Exactly one of `connectionString`, `pglite` or `driver`. */
  connectionString?: string;
  /**
   * PGlite (in-process). `dataDir` persists the catalog; omit it for an in-memory database. Or pass your own
   * open PGlite `instance` (it stays yours: `close()` leaves it open).
   */
  pglite?: PgliteDriverOptions;
  /** Tables live in this schema. @default 'utcp' */
  schema?: string;
  /** How long a stored manual is reused instead of discovered again, in ms (0: never). @default 3600000 */
  discoveryTtlMs?: number;
  /** Listen for changes made by other processes. @default true */
  listen?: boolean;
  /** Server pool size. @default 4 */
  poolMax?: number;
  /** @default 10000 */
  connectTimeoutMs?: number;
  logger?: Logger;
}

export const POSTGRES_REPOSITORY_TYPES = ['postgres', 'pglite'] as const;

const KEYS: Record<string, readonly string[]> = {
  postgres: ['tool_repository_type', 'connection_string', 'schema', 'discovery_ttl_seconds', 'pool_max', 'listen'],
  pglite: ['tool_repository_type', 'data_dir', 'schema', 'discovery_ttl_seconds', 'listen'],
};

/**
 * Turns the config object into repository options. `resolveValue` substitutes `${VAR}` references (the
 * connection string usually comes from the environment); relative `data_dir` is taken from `rootDir`.
 * @throws UtcpValidationError (INVALID_CONFIG) naming each bad key.
 */
export function postgresOptionsFromConfig(
  config: Record<string, unknown>,
  context: { rootDir: string; resolveValue(value: string): string },
): Omit<PostgresToolRepositoryOptions, 'logger'> {
  const type = config.tool_repository_type as string;
  const issues: ValidationIssue[] = [];
  const at = (k: string) => `tool_repository.${k}`;
  for (const k of Object.keys(config))
    if (!KEYS[type].includes(k))
      issues.push({ path: at(k), message: `unknown key for tool_repository_type "${type}"` });
  const options: Omit<PostgresToolRepositoryOptions, 'logger'> = {};
  if (config.schema !== undefined) {
    if (typeof config.schema !== 'string' || !/^[a-z_][a-z0-9_]{0,40}$/.test(config.schema))
      issues.push({ path: at('schema'), message: 'must match [a-z_][a-z0-9_]* (at most 41 characters)' });
    else options.schema = config.schema;
  }
  if (config.discovery_ttl_seconds !== undefined) {
    const v = config.discovery_ttl_seconds;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      issues.push({ path: at('discovery_ttl_seconds'), message: 'must be a non-negative number (0 disables reuse)' });
    else options.discoveryTtlMs = v * 1000;
  }
  if (config.listen !== undefined) {
    if (typeof config.listen !== 'boolean') issues.push({ path: at('listen'), message: 'must be a boolean' });
    else options.listen = config.listen;
  }
  if (type === 'postgres') {
    const cs = config.connection_string;
    if (typeof cs !== 'string' || cs === '')
      issues.push({ path: at('connection_string'), message: 'required: a postgres:// URL, e.g. "${DATABASE_URL}"' });
    if (config.pool_max !== undefined) {
      const v = config.pool_max;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
        issues.push({ path: at('pool_max'), message: 'must be a positive integer' });
      else options.poolMax = v;
    }
    if (issues.length > 0) throw new UtcpValidationError('config', issues, 'INVALID_CONFIG');
    // Resolved here, never stored or logged: the URL may carry a password.
    options.connectionString = context.resolveValue(cs as string);
    // node-postgres reads anything else as a path relative to postgres://base (ENOTFOUND base): refuse it here,
    // without echoing the value (docs/design/repository-postgres.md#config).
    if (!/^(postgres|postgresql):\/\/|^socket:/i.test(options.connectionString))
      throw new UtcpValidationError(
        'config',
        [
          {
            path: at('connection_string'),
            message:
              'must be a postgres:// or postgresql:// URL (or socket:/path); the value given is not one (e.g. "postgres://user:pass@host:5432/db", or "postgres://user@/db?host=/var/run/postgresql" for a local socket)',
          },
        ],
        'INVALID_CONFIG',
      );
  } else {
    const dir = config.data_dir;
    if (dir !== undefined && (typeof dir !== 'string' || dir === ''))
      issues.push({ path: at('data_dir'), message: 'must be a directory path (omit it for an in-memory database)' });
    if (issues.length > 0) throw new UtcpValidationError('config', issues, 'INVALID_CONFIG');
    const resolved = typeof dir === 'string' ? context.resolveValue(dir) : undefined;
    options.pglite = {
      dataDir:
        resolved === undefined ? undefined : isAbsolute(resolved) ? resolved : resolve(context.rootDir, resolved),
    };
  }
  return options;
}
