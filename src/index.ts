/**
 * utcp-kit: the composition root. `UtcpClient.create(config)` wires the built-in transports
 * (each imported on first use), the in-memory repository with the configured search strategy,
 * and the OpenAPI converter. Every name exported here is public API.
 */
import type { ClientDefaults, UtcpClientOptions } from './core/client.js';
import type { RepositoryContext } from './core/client-types.js';
import { UtcpClientBase } from './core/client.js';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { UtcpClientConfig } from './core/config.js';
import * as deadline from './core/deadline.js';
import { UtcpError } from './core/errors.js';
import type { ToolSearchStrategy } from './core/repository.js';
import type { OpenApiConverter } from './core/transport.js';
import { Bm25Search } from './repository/bm25-search.js';
import { InMemoryToolRepository } from './repository/in-memory-repository.js';
import { LazyToolRepository } from './repository/lazy-repository.js';
import {
  DEFAULT_DISCOVERY_TTL_MS,
  POSTGRES_REPOSITORY_TYPES,
  postgresOptionsFromConfig,
} from './repository/postgres/postgres-config.js';
import { WordMatchSearch } from './repository/word-match-search.js';
import { builtinTransports } from './transports/builtin.js';

const convertOpenApi: OpenApiConverter = async (doc, options) =>
  (await import('./loaders/openapi/client-adapter.js')).convertOpenApi(doc, options);

function createSearch(config: UtcpClientConfig, context: RepositoryContext): ToolSearchStrategy {
  const s = config.tool_search_strategy;
  const type = s?.tool_search_strategy_type ?? 'bm25';
  if (type === 'bm25') {
    const dir = s?.index_cache_dir;
    const indexOnFirstSearch = s?.index_on_first_search === true;
    const indexBudgetMs = s?.index_budget_ms;
    if (typeof dir !== 'string') return new Bm25Search({ indexOnFirstSearch, indexBudgetMs });
    return new Bm25Search({
      indexOnFirstSearch,
      indexBudgetMs,
      indexCacheDir: resolve(context.rootDir, dir),
      onIndexCacheError: (error) =>
        context.logger.warn('The search index cache could not be written; indexes are built as usual', {
          dir,
          error: error.message,
        }),
    });
  }
  if (type === 'tag_and_description_word_match') return new WordMatchSearch(s);
  throw new UtcpError(
    'INVALID_CONFIG',
    `Unknown tool_search_strategy_type "${type}"; expected "bm25" or "tag_and_description_word_match"`,
  );
}

const defaults: ClientDefaults = {
  transports: builtinTransports,
  createRepository(config, context) {
    const type = config.tool_repository?.tool_repository_type ?? 'in_memory';
    if ((POSTGRES_REPOSITORY_TYPES as readonly string[]).includes(type)) {
      // Checked now, loaded (with its driver) on first use: see docs/design/repository-postgres.md.
      const options = postgresOptionsFromConfig(config.tool_repository!, context);
      return new LazyToolRepository(
        async () =>
          new (await import('./repository/postgres/postgres-repository.js')).PostgresToolRepository({
            ...options,
            logger: context.logger,
          }),
        options.discoveryTtlMs ?? DEFAULT_DISCOVERY_TTL_MS,
      );
    }
    if (type !== 'in_memory')
      throw new UtcpError(
        'INVALID_CONFIG',
        `Unknown tool_repository_type "${type}"; expected "in_memory", "postgres" or "pglite", or pass a repository in the client options`,
      );
    return new InMemoryToolRepository(createSearch(config, context));
  },
  convertOpenApi,
};

/** The UTCP client with the built-in transports, repository and search. */
/** True when `path` names an existing directory (the official SDK's `create(rootDir, …)` form). */
function isDirectory(path: string): boolean {
  if (path.includes('\0')) return false;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export class UtcpClient extends UtcpClientBase {
  /**
   * Creates a client and registers the config's manuals (one failing manual never blocks the others:
   * see `initialRegistrations`).
   *
   * `config` is a config object, or the path of a JSON or YAML config file, relative to `options.rootDir`
   * (default: the working directory), which also anchors every relative path of the config.
   * `UtcpClient.create('utcp.config.yaml')` loads that file; a missing file is an error.
   *
   * The official SDK's form `create(rootDir, config?)` is accepted too: when the first argument names an existing
   * directory, it is the root directory and the second argument is the config (an object, a path, or null), with
   * this library's options third (docs/design/api.md#create-forms).
   * @throws UtcpError (code INVALID_CONFIG) when the config is malformed or cannot be read.
   */
  static create(
    config?: UtcpClientConfig | string,
    options?: UtcpClientOptions | UtcpClientConfig | string | null,
    moreOptions?: UtcpClientOptions,
  ): Promise<UtcpClient> {
    if (typeof config === 'string' && isDirectory(config)) {
      const second = options ?? undefined;
      if (second !== undefined && typeof second !== 'string' && (typeof second !== 'object' || Array.isArray(second)))
        return Promise.reject(
          new UtcpError(
            'INVALID_CONFIG',
            'UtcpClient.create(rootDir, config): config must be an object, a path or null',
          ),
        );
      return UtcpClient.createWith(defaults, config, second as UtcpClientConfig | string | undefined, moreOptions);
    }
    if (arguments.length > 2 || typeof options === 'string') {
      // create(x, y, z) where x is not a directory: refuse rather than guess which argument is which.
      return Promise.reject(
        new UtcpError(
          'INVALID_CONFIG',
          'UtcpClient.create(config, options) takes two arguments; pass the root directory as options.rootDir (or call create(rootDir, config) with an existing directory first)',
        ),
      );
    }
    return UtcpClient.createWith(defaults, undefined, config, (options ?? undefined) as UtcpClientOptions | undefined);
  }

  /** Creates a client from a JSON or YAML config file; its directory becomes the root dir unless `options.rootDir` is set. */
  static async fromConfigFile(path: string, options: UtcpClientOptions = {}): Promise<UtcpClient> {
    const { dirname, resolve } = await import('node:path');
    const abs = resolve(path);
    return UtcpClient.createWith(defaults, options.rootDir ?? dirname(abs), abs, options);
  }
}

export type {
  CallToolOptions,
  DirectFunction,
  RegisterOptions,
  UtcpClientOptions,
  RepositoryContext,
} from './core/client.js';
export type { UtcpClientConfig, DotenvLoaderConfig, ToolSearchStrategyConfig } from './core/config.js';
export {
  UtcpError,
  UtcpValidationError,
  UtcpArgumentsError,
  ToolNotFoundError,
  UtcpVariableNotFoundError,
  UrlPolicyError,
  UtcpLimitError,
  HttpStatusError,
  ToolExecutionError,
  CliExitError,
  UtcpTimeoutError,
  UtcpAbortError,
  TransportError,
  RepositoryError,
  CircuitOpenError,
  isUtcpError,
} from './core/errors.js';
export type { ResilienceConfig, CircuitBreakerConfig, ResolvedResilience } from './core/resilience.js';
export type { ToolRetryEvent } from './http/http-retry.js';

/**
 * A protocol timeout on top of a signal (see `withTimeout`): `signal` aborts with the parent, or after the
 * timeout with a `UtcpTimeoutError`. Call `dispose()` when the work is over (it stops the timer and unlinks).
 */
export interface TimeoutHandle {
  readonly signal: AbortSignal;
  /** Stops the timer; the signal keeps following its parent until `dispose()`. */
  clearTimer(): void;
  dispose(): void;
}

// The deadline helpers a transport outside the package honours `CallOptions.signal` and `CallOptions.deadline`
// with (docs/design/adding-a-transport.md#external-deadlines): the same functions the built-in transports use,
// typed for a plain AbortSignal.

/**
 * A signal that aborts with `signal` or after `timeoutMs` (≤ 0, absent or past Node's timer range: no timer)
 * with a `UtcpTimeoutError` naming `what`. On the client's call signal the timer is armed on it directly.
 */
export const withTimeout: (signal: AbortSignal, timeoutMs: number | null | undefined, what: string) => TimeoutHandle =
  deadline.withTimeout;
/** Calls `hook` once when `signal` aborts (at once if it already has). @returns the function that removes the hook. */
export const onAbort: (signal: AbortSignal, hook: (reason: unknown) => void) => () => void = deadline.onAbort;
/**
 * The typed error for an aborted signal: its `UtcpError` reason as is (a deadline's `UtcpTimeoutError`, a closing
 * client's `CLIENT_CLOSED`), a platform timeout as `UtcpTimeoutError`, anything else as `UtcpAbortError`.
 */
export const abortError: (signal: AbortSignal, what: string, timeoutMs?: number) => UtcpError = deadline.abortError;
/** Throws `abortError(signal, …)` when `signal` has aborted. */
export const throwIfAborted: (signal: AbortSignal, what: string, timeoutMs?: number) => void = deadline.throwIfAborted;
/** The error to throw for `error`, caught while `signal` was in force: the typed abort error once it aborted. */
export const settleError: (error: unknown, signal: AbortSignal, what: string, timeoutMs?: number) => unknown =
  deadline.settleError;
/** Settles like `promise`, or rejects with the typed abort error as soon as `signal` aborts. */
export const raceSignal: <T>(promise: Promise<T>, signal: AbortSignal, what: string, timeoutMs?: number) => Promise<T> =
  deadline.raceSignal;
/** Waits `ms`; rejects with the signal's reason as soon as it aborts (the timer is cleared). */
export const sleep: (ms: number, signal?: AbortSignal) => Promise<void> = deadline.sleep;
/** The time left until `options.deadline` (`CallOptions.deadline`), never below 0; undefined without a deadline. */
export const remainingMs: (options: { readonly deadline?: number }) => number | undefined = deadline.remainingMs;

export { McpServerError } from './transports/mcp/mcp-server-error.js';
export { GraphqlError } from './transports/graphql/graphql-error.js';
export { GrpcError } from './transports/grpc/grpc-error.js';
export type { UtcpErrorCode, ValidationIssue } from './core/errors.js';
export type {
  Auth,
  ApiKeyAuth,
  BasicAuth,
  OAuth2Auth,
  OAuth2UserAuth,
  CallTemplateBase,
  Tool,
  UtcpManual,
  RegisterManualResult,
  JsonObject,
  JsonSchema,
  JsonValue,
} from './core/types.js';
export type { HttpCallTemplate, HttpMethod } from './transports/http/template.js';
export type { SseCallTemplate } from './transports/sse/template.js';
export type { StreamableHttpCallTemplate } from './transports/streamable-http/template.js';
export type { CliCallTemplate, CommandStep } from './transports/cli/template.js';
export type { McpCallTemplate, McpServerConfig } from './transports/mcp/template.js';
export type { TextCallTemplate } from './transports/text/template.js';
export type { FileCallTemplate } from './transports/file/template.js';
export type { WebSocketCallTemplate } from './transports/websocket/template.js';
export type { TcpCallTemplate } from './transports/tcp/template.js';
export type { UdpCallTemplate } from './transports/udp/template.js';
export type { GraphqlCallTemplate } from './transports/graphql/template.js';
export type { GrpcCallTemplate } from './transports/grpc/template.js';
export type { DirectCallTemplate } from './transports/direct/template.js';
export type { OpenApiFilter } from './transports/shared/template-fields.js';
export type { CallTemplate, BuiltinCallTemplateType as CallTemplateType } from './transports/builtin.js';
export { BUILTIN_CALL_TEMPLATE_TYPES } from './transports/builtin.js';
export type { CallTemplateSpec, TemplateOf, TemplateType, TemplateObject } from './core/template.js';
export { defineCallTemplate } from './core/template.js';
export type {
  Transport,
  TransportContext,
  TransportFactory,
  TransportDefinition,
  PrecompiledTemplate,
  CallOptions,
  DiscoveryResult,
  ProgressEvent,
  DirectCallable,
  CallGate,
  OpenApiConverter,
  OpenApiConverterOptions,
} from './core/transport.js';
export type { Logger } from './core/logger.js';
export type { Limits } from './core/limits.js';
export type {
  ToolRepository,
  ToolSearchStrategy,
  SearchOptions,
  StoredManual,
  SaveManualInfo,
  CatalogChangeEvent,
} from './core/repository.js';
export type { VariableSource } from './core/variables.js';
export type {
  PostProcessorFn,
  PostProcessContext,
  PostProcessorConfig,
  FilterDictConfig,
  LimitStringsConfig,
} from './core/post-processors.js';
export { InMemoryToolRepository } from './repository/in-memory-repository.js';
export { Bm25Search, type Bm25Options } from './repository/bm25-search.js';
export { WordMatchSearch } from './repository/word-match-search.js';
