/**
 * The UTCP client: registers manuals, stores their tools, searches them and calls them through
 * per-client transport instances. It receives its transports, repository and OpenAPI converter
 * from the composition root (`src/index.ts`); core imports no transport.
 *
 * This is the facade (docs/design/README.md#client-layout): the shared state and shutdown live in
 * `client-core.ts`, registration in `client-registration.ts`, calls in `client-calls.ts`.
 */
import { resolve } from 'node:path';
import { callTool, callToolStreaming } from './client-calls.js';
import { ClientCore, requireString } from './client-core.js';
import {
  deregisterManual,
  getRequiredVariablesForManualAndTools,
  refreshManual,
  registerFunctions,
  registerManual,
} from './client-registration.js';
import type {
  CallToolOptions,
  ClientDefaults,
  DirectFunction,
  RegisterOptions,
  UtcpClientOptions,
} from './client-types.js';
import { loadConfig, type LoadedConfig, type UtcpClientConfig } from './config.js';
import { UtcpError } from './errors.js';
import type { CatalogChangeEvent, SearchOptions } from './repository.js';
import type { DirectCallable } from './transport.js';
import type { CallTemplateBase, JsonObject, RegisterManualResult, Tool } from './types.js';
import { collectTemplateVariables } from './variables.js';

export type {
  CallToolOptions,
  ClientDefaults,
  DirectFunction,
  RegisterOptions,
  RepositoryContext,
  UtcpClientOptions,
} from './client-types.js';

export class UtcpClientBase {
  readonly rootDir: string;
  /** The loaded config (variables as written, never resolved). */
  readonly config: UtcpClientConfig;
  /** Results of registering the config's `manual_call_templates` at creation. */
  readonly initialRegistrations: RegisterManualResult[] = [];
  /** Non-fatal problems found while loading the config. */
  readonly configWarnings: string[];

  readonly #core: ClientCore;

  constructor(rootDir: string, loaded: LoadedConfig, options: UtcpClientOptions, defaults: ClientDefaults) {
    this.rootDir = rootDir;
    this.config = loaded.config;
    this.configWarnings = loaded.warnings;
    this.#core = new ClientCore(rootDir, loaded, options, defaults, (name) => this.refreshManual(name));
  }

  /**
   * Creates a client from a UTCP config object or the path of a JSON/YAML config file (relative to the root dir).
   * Registers the config's manuals; one failing manual never blocks the others (see `initialRegistrations`).
   * @throws UtcpValidationError (code INVALID_CONFIG) when the config itself is malformed.
   */
  protected static async createWith<C extends UtcpClientBase>(
    this: new (
      rootDir: string,
      loaded: LoadedConfig,
      options: UtcpClientOptions,
      defaults: ClientDefaults,
    ) => C,
    defaults: ClientDefaults,
    rootDir: string | undefined,
    config: UtcpClientConfig | string | undefined,
    options: UtcpClientOptions = {},
  ): Promise<C> {
    // JavaScript callers can pass anything: wrong types are typed errors, not a TypeError from deep inside.
    if (typeof options !== 'object' || options === null)
      throw new UtcpError('INVALID_CONFIG', 'UtcpClient options must be an object');
    const dir = rootDir ?? options.rootDir;
    if (dir !== undefined && (typeof dir !== 'string' || dir.includes('\0')))
      throw new UtcpError('INVALID_CONFIG', 'rootDir must be a path string without NUL characters');
    const root = resolve(dir ?? process.cwd());
    const loaded = await loadConfig(config, root);
    const client = new this(root, loaded, options, defaults);
    try {
      await client.#core.repo.open?.();
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    const templates = loaded.config.manual_call_templates ?? [];
    if (templates.length > 0) {
      const results = await client.registerManuals(templates);
      client.initialRegistrations.push(...results);
      for (const r of results) {
        if (!r.success)
          client.#core.logger.warn(`Manual ${r.manualCallTemplate.name ?? '(unnamed)'} failed to register`, {
            errors: r.errors,
          });
      }
    }
    return client;
  }

  // ------------------------------------------------------------------ transports

  /** Types this client can handle (built-in plus custom). */
  get transportTypes(): string[] {
    return this.#core.templates.types;
  }

  // ------------------------------------------------------------------ registration

  /**
   * Discovers and stores the tools of one manual. Never throws for a bad manual: the result says
   * `success: false` with `errors`, and nothing is stored. Tools that cannot be parsed are skipped with a warning.
   */
  registerManual(
    template: CallTemplateBase | Record<string, unknown>,
    options: RegisterOptions = {},
  ): Promise<RegisterManualResult> {
    return registerManual(this.#core, template, options);
  }

  /** Registers several manuals concurrently; each gets its own result, in input order. */
  async registerManuals(
    templates: ReadonlyArray<CallTemplateBase | Record<string, unknown>>,
    options: RegisterOptions = {},
  ): Promise<RegisterManualResult[]> {
    if (!Array.isArray(templates))
      throw new UtcpError('INVALID_ARGUMENTS', 'registerManuals takes an array of call templates');
    return Promise.all(templates.map((t) => this.registerManual(t, options)));
  }

  /**
   * Registers in-process functions as the tools of one manual (`<manualName>.<fn.name>`),
   * so agents can mix local and remote tools.
   */
  registerFunctions(manualName: string, functions: readonly DirectFunction[]): Promise<RegisterManualResult> {
    return registerFunctions(this.#core, manualName, functions, (t) => this.registerManual(t));
  }

  /** Registers a callable that `direct` tool templates can name with `callable_name`. */
  registerCallable(name: string, callable: DirectCallable): void {
    this.#core.callables.set(name, { callable });
  }

  /** Removes a manual and its tools and frees its sessions. Returns false when unknown. */
  deregisterManual(name: string): Promise<boolean> {
    return deregisterManual(this.#core, name);
  }

  /** Re-runs discovery for a registered manual and swaps its tools in at once. */
  refreshManual(name: string, options: RegisterOptions = {}): Promise<RegisterManualResult> {
    return refreshManual(this.#core, name, options);
  }

  // ------------------------------------------------------------------ catalog changes

  /**
   * Calls `listener` whenever a manual is saved or removed in this client's repository, including by other
   * processes sharing it (docs/design/repository-postgres.md). `resync` means changes may have been missed.
   * Returns a function that removes the listener.
   */
  onCatalogChange(listener: (event: CatalogChangeEvent) => void): () => void {
    this.#core.catalogListeners.add(listener);
    return () => this.#core.catalogListeners.delete(listener);
  }

  // ------------------------------------------------------------------ lookup and search

  /** The stored tool (raw template, no secrets), or undefined. */
  async getTool(name: string): Promise<Tool | undefined> {
    return this.#core.repo.getTool(name);
  }

  async getTools(): Promise<Tool[]> {
    return this.#core.repo.getTools();
  }

  async getManualNames(): Promise<string[]> {
    return this.#core.repo.getManualNames();
  }

  /** The stored manual template and manual (raw, no secrets). */
  async getManual(name: string) {
    return this.#core.repo.getManual(name);
  }

  /**
   * Ranked search over tool names, descriptions and tags.
   * `searchTools(query, limit?, anyOfTagsRequired?)` or `searchTools(query, { limit, anyOfTagsRequired })`.
   * `limit` defaults to 10; 0 returns every match.
   */
  async searchTools(
    query: string,
    limitOrOptions?: number | SearchOptions,
    anyOfTagsRequired?: string[] | null,
  ): Promise<Tool[]> {
    const opts: SearchOptions =
      typeof limitOrOptions === 'object' && limitOrOptions !== null
        ? limitOrOptions
        : { limit: limitOrOptions, anyOfTagsRequired };
    const limit = opts.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 0)
      throw new UtcpError('INVALID_ARGUMENTS', `searchTools: limit must be a non-negative integer, got ${limit}`);
    return this.#core.repo.searchTools(query ?? '', { limit, anyOfTagsRequired: opts.anyOfTagsRequired ?? null });
  }

  /**
   * The namespaced variable keys a manual template needs; when the template references none,
   * discovery runs and the keys referenced by its tool templates are returned.
   */
  getRequiredVariablesForManualAndTools(template: CallTemplateBase | Record<string, unknown>): Promise<string[]> {
    return getRequiredVariablesForManualAndTools(this.#core, template);
  }

  /** The namespaced variable keys a registered tool's template needs. */
  async getRequiredVariablesForRegisteredTool(toolName: string): Promise<string[]> {
    requireString(toolName, 'A tool name');
    const tool = await this.#core.repo.getTool(toolName);
    if (!tool) throw await this.#core.notFound(toolName);
    return collectTemplateVariables(tool.tool_call_template, toolName.split('.')[0]);
  }

  // ------------------------------------------------------------------ calls

  /**
   * Calls a tool by its full name (`<manual>.<tool>`). `T` types the result for the caller; nothing checks it at
   * run time (a tool's `outputs` schema is documentation).
   * @throws ToolNotFoundError, UtcpArgumentsError, UtcpVariableNotFoundError, UtcpTimeoutError, UtcpAbortError,
   *   or the transport's typed error (HttpStatusError, CliExitError, ToolExecutionError, TransportError, ...).
   */
  callTool<T = unknown>(name: string, args?: JsonObject, options: CallToolOptions = {}): Promise<T> {
    return callTool<T>(this.#core, name, args, options);
  }

  /**
   * Calls a tool and yields its results as they arrive. One-shot protocols yield exactly one item.
   * Breaking out of the loop cancels the call.
   */
  callToolStreaming<T = unknown>(
    name: string,
    args?: JsonObject,
    options: CallToolOptions = {},
  ): AsyncGenerator<T, void, undefined> {
    return callToolStreaming<T>(this.#core, name, args, options);
  }

  // ------------------------------------------------------------------ shutdown

  /** `await using client = await UtcpClient.create(...)` closes the client when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes every transport (sessions, sockets, child processes) of this client. Safe to call twice. */
  close(): Promise<void> {
    return this.#core.close();
  }

  /**
   * Runs `hook` when this client closes (after in-flight calls are aborted, before transports close), so code that
   * registers functions can stop what they started (child processes, servers). Errors go to the logger.
   * Returns a disposer that unregisters the hook. @throws UtcpError CLIENT_CLOSED when the client is already closed
   */
  onClose(hook: () => void | Promise<void>): () => void {
    this.#core.assertOpen();
    this.#core.onClose.add(hook);
    return () => void this.#core.onClose.delete(hook);
  }

  get closed(): boolean {
    return this.#core.closed;
  }
}
