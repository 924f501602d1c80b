/**
 * The UTCP client: registers manuals, stores their tools, searches them and calls them through
 * per-client transport instances. It receives its transports, repository and OpenAPI converter
 * from the composition root (`src/index.ts`); core imports no transport.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { LookupFunction } from 'node:net';
import { resolve } from 'node:path';
import { ArgumentValidator } from './arguments.js';
import { encodeBytes, fillRequiredDefaults } from './argument-defaults.js';
import { loadConfig, type LoadedConfig, type UtcpClientConfig } from './config.js';
import { DotenvSource } from './dotenv.js';
import {
  ToolNotFoundError,
  TransportError,
  UtcpArgumentsError,
  UtcpError,
  UtcpValidationError,
  formatIssues,
} from './errors.js';
import { documentType, normalizeCallTemplate, normalizeManual } from './legacy.js';
import { resolveLimits, type Limits } from './limits.js';
import { completeLogger, type Logger } from './logger.js';
import { redactingLogger, Redactor } from './redact.js';
import { postProcessorFromConfig, type PostProcessorFn } from './post-processors.js';
import { suggestToolNames } from './suggest.js';
import type { CatalogChangeEvent, SearchOptions, ToolRepository } from './repository.js';
import {
  abortError,
  attachCallScope,
  createDeadline,
  settleError,
  type AbortSource,
  type Deadline,
  scopeController,
} from './deadline.js';
import type {
  CallOptions,
  DirectCallable,
  OpenApiConverter,
  ProgressEvent,
  Transport,
  TransportContext,
} from './transport.js';
import { TemplateRegistry, type TransportEntry } from './template-registry.js';
import type { CallTemplateBase, JsonObject, JsonSchema, RegisterManualResult, Tool, UtcpManual } from './types.js';
import { isLoopbackLike } from './url-policy.js';
import { validateCallTemplate, validateTool } from './validate.js';
import {
  VariableResolver,
  collectTemplateVariables,
  resolveValue,
  sanitizeManualName,
  substituteTemplate,
  type VariableSource,
} from './variables.js';

/** Options for one tool call. */
export interface CallToolOptions {
  /** Cancels the call (and closes its sockets, kills its processes). */
  signal?: AbortSignal;
  /** Deadline for this call, in milliseconds. @default the client's `timeoutMs`, else the transport's own default */
  timeoutMs?: number;
  /** Receives progress notifications when the protocol has them. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Return the protocol's own result envelope unmapped, where it has one: for MCP tools the `CallToolResult`
   * (`content`, `structuredContent`, `isError`; an `isError` result is returned, not thrown). Other protocols
   * ignore it. Post-processors still apply. @default false
   */
  raw?: boolean;
}

/** Options for one manual registration. */
export interface RegisterOptions {
  signal?: AbortSignal;
  /** Deadline for discovery, in milliseconds. @default the transport's own discovery timeout */
  timeoutMs?: number;
  /** On a shared repository, discover again even when the stored manual is still fresh (see docs/design/repository-postgres.md). */
  refresh?: boolean;
}

/** A function to expose as a tool (see `registerFunctions`). */
export interface DirectFunction {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. @default {} */
  inputs?: JsonSchema;
  outputs?: JsonSchema;
  tags?: string[];
  handler: DirectCallable;
}

/** Wiring and behaviour that is not part of the UTCP config. */
export interface UtcpClientOptions {
  /** Anchors relative paths (file manuals, dotenv, CLI working_dir, MCP cwd, .proto files). @default process.cwd() */
  rootDir?: string;
  /**
   * Add or replace transports by call_template_type: a factory, or a definition with the template spec
   * (docs/design/adding-a-transport.md). @default the built-in set
   */
  transports?: Record<string, TransportEntry>;
  /** Default deadline per call, in milliseconds. @default none: each transport applies its own protocol default */
  timeoutMs?: number;
  /** Validate arguments against each tool's `inputs` before any transport runs. @default true */
  validateArguments?: boolean;
  /** Extra variable sources, after config `variables` and `load_variables_from`, before the environment. */
  variableSources?: VariableSource[];
  /** Functions applied to every result after the config's post-processors. */
  postProcessors?: PostProcessorFn[];
  /** Receives diagnostics. @default silent */
  logger?: Logger;
  /** Replaces the tool repository. @default in-memory with the configured search strategy */
  repository?: ToolRepository;
  /** Environment used for variable lookup. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * Resolves host names for every connection this client opens (HTTP family, WebSocket, TCP, UDP),
   * with `dns.lookup`'s signature. The dial guard checks its answers. @default dns.lookup
   */
  lookup?: LookupFunction;
  /**
   * Contain the process trees of cli tools and MCP stdio servers with a PID namespace (Linux, via `unshare` or
   * `bwrap`, probed once): when the command ends or the client closes, the kernel ends every process it started,
   * including ones that left the process group. `false` keeps only the process-group and marker containment
   * (docs/design/threat-model.md#process-trees). @default true
   */
  pidNamespaces?: boolean;
}

/** What the composition root gets to build the configured repository. */
export interface RepositoryContext {
  rootDir: string;
  logger: Required<Logger>;
  /** Substitutes `${VAR}` references from the client's variables, dotenv files and environment. */
  resolveValue(value: string): string;
}

/** What the composition root supplies. */
export interface ClientDefaults {
  transports: Record<string, TransportEntry>;
  createRepository(config: UtcpClientConfig, context: RepositoryContext): ToolRepository;
  convertOpenApi: OpenApiConverter;
}

interface DiscoveredManual {
  manual: UtcpManual;
  warnings: string[];
  allowed: ReadonlySet<string>;
  /** Full tool name → why it was left out. */
  dropped: Map<string, string>;
  /** How many tools the document listed. */
  offered: number;
  /** The document came from a remote origin (provenance, docs/design/threat-model.md#remote-loopback-call-time). */
  remoteSource: boolean;
}

const FAILED_MANUAL: UtcpManual = Object.freeze({
  utcp_version: '1.0.0',
  manual_version: '0.0.0',
  tools: Object.freeze([]) as unknown as Tool[],
});

/**
 * Provenance of a manual from its template alone (when the transport did not report it): a template
 * naming a non-loopback `url` or `host` is remote. Placeholders count as remote (they are not loopback literals).
 */
/** JavaScript callers may pass anything: a name that is not a string is INVALID_ARGUMENTS, not a TypeError later. */
function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw new UtcpError('INVALID_ARGUMENTS', `${what} must be a string, not ${value === null ? 'null' : typeof value}`);
  return value;
}

/** The call template types a manual document names (its own and its tools' `call_template_type`), each once. */
function namedTypes(doc: unknown): Set<unknown> {
  const types = new Set<unknown>([documentType(doc)]);
  const tools = (doc as { tools?: unknown } | null)?.tools;
  if (Array.isArray(tools))
    for (const t of tools)
      types.add(
        (t as { tool_call_template?: { call_template_type?: unknown } } | null)?.tool_call_template?.call_template_type,
      );
  return types;
}

/** Per-call options from JavaScript callers may be anything: wrong types are INVALID_ARGUMENTS, before any work. */
function assertCallOptions(options: CallToolOptions, name: string): void {
  const bad = (what: string) => new UtcpError('INVALID_ARGUMENTS', `Call of tool ${name}: ${what}`);
  if (typeof options !== 'object' || options === null) throw bad('options must be an object');
  const { signal, onProgress } = options;
  if (
    signal !== undefined &&
    (typeof signal !== 'object' ||
      signal === null ||
      typeof (signal as AbortSignal).addEventListener !== 'function' ||
      typeof (signal as AbortSignal).aborted !== 'boolean')
  )
    throw bad('options.signal must be an AbortSignal');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw bad('options.onProgress must be a function');
}

function remoteTemplate(template: CallTemplateBase): boolean {
  const t = template as unknown as Record<string, unknown>;
  const target = typeof t.url === 'string' ? t.url : typeof t.host === 'string' ? t.host : undefined;
  return target !== undefined && target.trim() !== '' && !isLoopbackLike(target.trim());
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class UtcpClientBase {
  readonly rootDir: string;
  /** The loaded config (variables as written, never resolved). */
  readonly config: UtcpClientConfig;
  /** Results of registering the config's `manual_call_templates` at creation. */
  readonly initialRegistrations: RegisterManualResult[] = [];
  /** Non-fatal problems found while loading the config. */
  readonly configWarnings: string[];

  readonly #repo: ToolRepository;
  readonly #templates: TemplateRegistry;
  readonly #transports = new Map<string, Promise<Transport>>();
  readonly #resolver: VariableResolver;
  readonly #logger: Required<Logger>;
  /** Every value this client substituted; errors and log lines leave the client through it. */
  readonly #redactor = new Redactor();
  readonly #limits: Limits;
  readonly #post: PostProcessorFn[];
  readonly #argValidator: ArgumentValidator | undefined;
  readonly #timeoutMs: number | undefined;
  readonly #reserved = new Set<string>();
  readonly #allowed = new Map<string, ReadonlySet<string>>();
  /** Per manual: tools left out at registration, with the reason, so a later call can say why it is missing. */
  readonly #dropped = new Map<string, Map<string, string>>();
  /** Provenance per manual: true when its document came from a remote origin (docs/design/threat-model.md#remote-loopback-call-time). */
  readonly #remote = new Map<string, boolean>();
  readonly #templateHasVars = new WeakMap<CallTemplateBase, boolean>();
  readonly #shared = new Map<string, { value: unknown; dispose?: (v: any) => void | Promise<void> }>();
  readonly #callables = new Map<
    string,
    {
      callable: DirectCallable;
      description?: string;
      inputs?: unknown;
      outputs?: unknown;
      tags?: string[];
      manual?: string;
    }
  >();
  readonly #closing = scopeController();
  readonly #inflight = new Set<Deadline>();
  readonly #onClose = new Set<() => void | Promise<void>>();
  readonly #context: TransportContext;
  /** True when this client built the repository from its config, so `close()` closes it. */
  readonly #ownsRepo: boolean;
  readonly #catalogListeners = new Set<(event: CatalogChangeEvent) => void>();
  readonly #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(rootDir: string, loaded: LoadedConfig, options: UtcpClientOptions, defaults: ClientDefaults) {
    this.rootDir = rootDir;
    this.config = loaded.config;
    this.configWarnings = loaded.warnings;
    this.#logger = redactingLogger(completeLogger(options.logger), this.#redactor);
    for (const w of loaded.warnings) this.#logger.warn(w);
    this.#limits = resolveLimits(loaded.config.limits);
    this.#templates = new TemplateRegistry({ ...defaults.transports, ...(options.transports ?? {}) });
    const sources: VariableSource[] = (loaded.config.load_variables_from ?? []).map(
      (l) => new DotenvSource(l.env_file_path, rootDir),
    );
    this.#resolver = new VariableResolver(
      loaded.config.variables ?? {},
      [...sources, ...(options.variableSources ?? [])],
      options.env ?? process.env,
    );
    this.#ownsRepo = !options.repository;
    this.#repo =
      options.repository ??
      defaults.createRepository(loaded.config, {
        rootDir,
        logger: this.#logger,
        resolveValue: (v) => resolveValue(v, this.#resolver),
      });
    this.#unsubscribe = this.#repo.subscribe?.((event) => this.#onCatalogChange(event));
    this.#post = [...loaded.postProcessing.map(postProcessorFromConfig), ...(options.postProcessors ?? [])];
    this.#argValidator = options.validateArguments === false ? undefined : new ArgumentValidator(this.#logger);
    this.#timeoutMs = options.timeoutMs;
    const convert = defaults.convertOpenApi;
    this.#context = {
      rootDir,
      logger: this.#logger,
      limits: this.#limits,
      convertOpenApi: (doc, opts) => convert(doc, { limits: this.#limits, ...opts }),
      callables: this.#callables,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.pidNamespaces === false ? { pidNamespaces: false } : {}),
      shared: <V>(key: string, create: () => V, dispose?: (value: V) => void | Promise<void>): V => {
        let entry = this.#shared.get(key);
        if (!entry) this.#shared.set(key, (entry = { value: create(), dispose }));
        return entry.value as V;
      },
      requestRefresh: (manualName) => {
        this.refreshManual(manualName).catch((e) =>
          this.#logger.warn(`Refreshing manual ${manualName} failed`, { error: messageOf(e) }),
        );
      },
    };
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
      await client.#repo.open?.();
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
          client.#logger.warn(`Manual ${r.manualCallTemplate.name ?? '(unnamed)'} failed to register`, {
            errors: r.errors,
          });
      }
    }
    return client;
  }

  // ------------------------------------------------------------------ transports

  /** Types this client can handle (built-in plus custom). */
  get transportTypes(): string[] {
    return this.#templates.types;
  }

  /** Legacy normalisation of a template, after loading the template specs of the types it involves. */
  async #normalizeTemplate(template: unknown, warnings: string[], where?: string): Promise<Record<string, unknown>> {
    const { value, notes } = await this.#templates.prepared(
      () => {
        const notes: string[] = [];
        return {
          value: normalizeCallTemplate(template, notes, where, this.#templates) as Record<string, unknown>,
          notes,
        };
      },
      (r) => [r.value?.call_template_type],
    );
    warnings.push(...notes);
    return value;
  }

  #transport(type: string): Promise<Transport> {
    let t = this.#transports.get(type);
    if (!t) {
      const definition = this.#templates.definition(type);
      if (!definition)
        return Promise.reject(
          new UtcpError(
            'UNKNOWN_TRANSPORT',
            `No transport for call_template_type "${type}"; known types: ${this.#templates.types.join(', ')}`,
          ),
        );
      t = Promise.resolve().then(() => definition.create(this.#context));
      t.catch(() => this.#transports.delete(type));
      this.#transports.set(type, t);
    }
    return t;
  }

  #assertOpen(): void {
    if (this.#closed) throw new UtcpError('CLIENT_CLOSED', 'This UtcpClient is closed');
  }

  // ------------------------------------------------------------------ registration

  /**
   * Discovers and stores the tools of one manual. Never throws for a bad manual: the result says
   * `success: false` with `errors`, and nothing is stored. Tools that cannot be parsed are skipped with a warning.
   */
  async registerManual(
    template: CallTemplateBase | Record<string, unknown>,
    options: RegisterOptions = {},
  ): Promise<RegisterManualResult> {
    this.#assertOpen();
    const warnings: string[] = [];
    const fail = (raw: CallTemplateBase, errors: string[]): RegisterManualResult => {
      for (const e of errors) this.#logger.warn(`Manual ${raw?.name ?? '(unnamed)'} not registered: ${e}`);
      return { manualCallTemplate: raw, manual: FAILED_MANUAL, success: false, errors, warnings };
    };
    let normalized: Record<string, unknown>;
    try {
      normalized = await this.#normalizeTemplate(template, warnings, 'manual call template');
    } catch (error) {
      return fail(template as CallTemplateBase, [messageOf(error)]);
    }
    const issues = validateCallTemplate(normalized, '', { templates: this.#templates });
    if (issues.length > 0)
      return fail(normalized as unknown as CallTemplateBase, [`Invalid manual call template: ${formatIssues(issues)}`]);

    const name =
      typeof normalized.name === 'string' && normalized.name !== ''
        ? sanitizeManualName(normalized.name)
        : randomUUID().replace(/-/g, '');
    const raw = { ...normalized, name } as CallTemplateBase;
    const taken = () => fail(raw, [`Manual ${name} already registered; deregister it first or choose another name`]);
    // Check-and-reserve happens synchronously, so concurrent registrations of one name cannot both pass.
    if (this.#reserved.has(name)) return taken();
    this.#reserved.add(name);
    let transport: Transport | undefined;
    try {
      const stored = await this.#repo.getManual(name);
      if (stored) {
        const ttl = this.#repo.discoveryTtlMs;
        // A shared catalog (docs/design/repository-postgres.md): the same template registered elsewhere is reused while fresh.
        if (ttl === undefined || !isDeepStrictEqual(stored.template, raw)) {
          this.#reserved.delete(name);
          return taken();
        }
        if (!options.refresh && ttl > 0 && stored.savedAt !== undefined && Date.now() - stored.savedAt < ttl) {
          this.#allowed.set(name, new Set(stored.allowedProtocols ?? this.#allowedProtocols(raw, false)));
          this.#logger.info(`Reused stored manual ${name} with ${stored.manual.tools.length} tools`);
          return { manualCallTemplate: raw, manual: stored.manual, success: true, errors: [], warnings };
        }
      }
      const substituted = this.#substitute(raw, name);
      transport = await this.#transport(raw.call_template_type);
      const deadline = createDeadline(
        [this.#closing.signal, options.signal],
        options.timeoutMs,
        `Discovery of manual ${name}`,
      );
      let discovered;
      try {
        discovered = await this.#discover(transport, substituted, raw, name, deadline.signal, options.timeoutMs);
      } finally {
        deadline.dispose();
      }
      warnings.push(...discovered.warnings);
      this.#assertOpen();
      await this.#repo.saveManual(name, raw, discovered.manual, { allowedProtocols: [...discovered.allowed] });
      this.#allowed.set(name, discovered.allowed);
      this.#noteDropped(name, discovered);
      this.#remote.set(name, discovered.remoteSource);
      this.#logger.info(`Registered manual ${name} with ${discovered.manual.tools.length} tools`);
      // Timeouts taken as seconds change behaviour silently otherwise (docs/design/transports.md#timeout-units).
      for (const w of warnings) if (w.includes(' read as seconds ')) this.#logger.warn(`Manual ${name}: ${w}`);
      return { manualCallTemplate: raw, manual: discovered.manual, success: true, errors: [], warnings };
    } catch (error) {
      if (transport?.deregisterManual) await transport.deregisterManual(raw, { manualName: name }).catch(() => {});
      return fail(raw, [this.#redactor.text(messageOf(error))]);
    } finally {
      this.#reserved.delete(name);
    }
  }

  async #discover(
    transport: Transport,
    substituted: CallTemplateBase,
    raw: CallTemplateBase,
    name: string,
    signal: AbortSignal,
    timeoutMs?: number,
  ): Promise<DiscoveredManual> {
    const options: CallOptions = { signal, manualName: name, rawTemplate: raw, timeoutMs };
    let result;
    try {
      result = await transport.registerManual(substituted, options);
    } catch (error) {
      throw settleError(error, signal, `Discovery of manual ${name}`, timeoutMs);
    }
    const warnings = [...(result.warnings ?? [])];
    const normalized = await this.#templates.prepared(
      () => {
        const notes: string[] = [];
        return {
          doc: normalizeManual(
            result.manual,
            raw as unknown as Record<string, unknown>,
            notes,
            this.#templates,
          ) as Record<string, unknown>,
          notes,
        };
      },
      ({ doc }) => namedTypes(doc),
      namedTypes(result.manual),
    );
    warnings.push(...normalized.notes);
    const doc = normalized.doc;
    if (typeof doc !== 'object' || doc === null || !Array.isArray(doc.tools)) {
      throw new UtcpValidationError('manual', [{ path: 'tools', message: 'required (an array of tools)' }]);
    }
    const allowed = this.#allowedProtocols(raw, result.openapi === true);
    const tools: Tool[] = [];
    const seen = new Set<string>();
    const dropped = new Map<string, string>();
    const protocolFix = `add them to the manual template's allowed_communication_protocols`;
    const validation = { templates: this.#templates };
    const prefix = `${name}.`;
    (doc.tools as unknown[]).forEach((value, i) => {
      const { tool, issues } = validateTool(value, i, validation);
      if (!tool) {
        warnings.push(
          `Skipped tool ${i}${typeof (value as Tool)?.name === 'string' ? ` (${(value as Tool).name})` : ''}: ${formatIssues(issues)}`,
        );
        return;
      }
      const type = tool.tool_call_template.call_template_type;
      const full = tool.name.startsWith(prefix) ? tool.name : prefix + tool.name;
      if (!allowed.has(type)) {
        const reason = `protocol "${type}" is not in allowed_communication_protocols [${[...allowed].join(', ')}] of manual ${name}`;
        warnings.push(`Dropped tool ${tool.name}: ${reason}; to keep such tools, ${protocolFix}`);
        dropped.set(full, `it was dropped when manual ${name} registered: ${reason}`);
        return;
      }
      if (seen.has(full)) {
        warnings.push(`Duplicate tool name ${full}: the first definition wins`);
        return;
      }
      seen.add(full);
      tool.name = full; // validateTool returned a fresh object
      tools.push(tool);
    });
    const manual: UtcpManual = {
      utcp_version: typeof doc.utcp_version === 'string' ? doc.utcp_version : '1.0.0',
      manual_version: typeof doc.manual_version === 'string' ? doc.manual_version : '1.0.0',
      tools,
    };
    return {
      manual,
      warnings,
      allowed,
      dropped,
      offered: (doc.tools as unknown[]).length,
      remoteSource: result.remoteSource ?? remoteTemplate(raw),
    };
  }

  /** Remembers dropped tools and says loudly (logger warn) when a manual keeps fewer tools than it offered. */
  #noteDropped(name: string, discovered: DiscoveredManual): void {
    if (discovered.dropped.size > 0) this.#dropped.set(name, discovered.dropped);
    else this.#dropped.delete(name);
    const kept = discovered.manual.tools.length;
    if (kept < discovered.offered) {
      const types = [
        ...new Set([...discovered.dropped.values()].map((r) => /protocol "([^"]+)"/.exec(r)?.[1]).filter(Boolean)),
      ];
      const how = types.length
        ? `; allow ${types.map((t) => `"${t}"`).join(', ')} in its allowed_communication_protocols to keep them`
        : '';
      this.#logger.warn(`Manual ${name} keeps ${kept} of its ${discovered.offered} tools${how}`, {
        manual: name,
        kept,
        offered: discovered.offered,
        warnings: discovered.warnings.length,
      });
    }
  }

  /** A ToolNotFoundError that says why (dropped at registration) or suggests close names. */
  async #notFound(name: string): Promise<ToolNotFoundError> {
    const dot = name.indexOf('.');
    const reason = dot > 0 ? this.#dropped.get(name.slice(0, dot))?.get(name) : undefined;
    if (reason) return new ToolNotFoundError(name, [], reason);
    const names = (await this.#repo.getTools()).map((t) => t.name);
    return new ToolNotFoundError(name, suggestToolNames(name, names));
  }

  #allowedProtocols(raw: CallTemplateBase, fromOpenApi: boolean): Set<string> {
    const list = raw.allowed_communication_protocols;
    if (list && list.length > 0) return new Set(list);
    const set = new Set([raw.call_template_type]);
    if (fromOpenApi) set.add('http');
    return set;
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
  async registerFunctions(manualName: string, functions: readonly DirectFunction[]): Promise<RegisterManualResult> {
    this.#assertOpen();
    const name = sanitizeManualName(requireString(manualName, 'A manual name'));
    if (!Array.isArray(functions))
      throw new UtcpError('INVALID_ARGUMENTS', `registerFunctions(${name}) takes an array of functions`);
    const added: string[] = [];
    for (const fn of functions) {
      if (typeof fn !== 'object' || fn === null)
        throw new UtcpError('INVALID_MANUAL', `registerFunctions(${name}): each function must be an object`);
      if (typeof fn.handler !== 'function')
        throw new UtcpError('INVALID_MANUAL', `Function ${fn.name}: handler must be a function`);
      const key = `${name}.${fn.name}`;
      if (this.#callables.has(key)) continue;
      this.#callables.set(key, {
        callable: fn.handler,
        description: fn.description,
        inputs: fn.inputs,
        outputs: fn.outputs,
        tags: fn.tags,
        manual: name,
      });
      added.push(key);
    }
    const result = await this.registerManual({ name, call_template_type: 'direct' });
    if (!result.success) for (const key of added) this.#callables.delete(key);
    return result;
  }

  /** Registers a callable that `direct` tool templates can name with `callable_name`. */
  registerCallable(name: string, callable: DirectCallable): void {
    this.#callables.set(name, { callable });
  }

  /** Removes a manual and its tools and frees its sessions. Returns false when unknown. */
  async deregisterManual(name: string): Promise<boolean> {
    const stored = await this.#repo.getManual(name);
    if (!stored) return false;
    await this.#repo.removeManual(name);
    this.#allowed.delete(name);
    this.#dropped.delete(name);
    this.#remote.delete(name);
    if (stored.template.call_template_type === 'direct') {
      for (const [key, entry] of this.#callables) if (entry.manual === name) this.#callables.delete(key);
    }
    const types = new Set([
      stored.template.call_template_type,
      ...stored.manual.tools.map((t) => t.tool_call_template.call_template_type),
    ]);
    for (const type of types) {
      const t = this.#transports.get(type);
      if (!t) continue;
      const transport = await t.catch(() => undefined);
      await transport
        ?.deregisterManual?.(stored.template, { manualName: name })
        .catch((e) => this.#logger.warn(`Deregistering ${name} from ${type} failed`, { error: messageOf(e) }));
    }
    return true;
  }

  /** Re-runs discovery for a registered manual and swaps its tools in at once. */
  async refreshManual(name: string, options: RegisterOptions = {}): Promise<RegisterManualResult> {
    this.#assertOpen();
    const stored = await this.#repo.getManual(name);
    if (!stored) throw new UtcpError('MANUAL_NOT_FOUND', `Manual not found: ${name}`);
    const raw = stored.template;
    try {
      const transport = await this.#transport(raw.call_template_type);
      const deadline = createDeadline(
        [this.#closing.signal, options.signal],
        options.timeoutMs,
        `Discovery of manual ${name}`,
      );
      let discovered;
      try {
        discovered = await this.#discover(
          transport,
          this.#substitute(raw, name),
          raw,
          name,
          deadline.signal,
          options.timeoutMs,
        );
      } finally {
        deadline.dispose();
      }
      if (await this.#repo.getManual(name)) {
        await this.#repo.saveManual(name, raw, discovered.manual, { allowedProtocols: [...discovered.allowed] });
        this.#allowed.set(name, discovered.allowed);
        this.#noteDropped(name, discovered);
        this.#remote.set(name, discovered.remoteSource);
      }
      return {
        manualCallTemplate: raw,
        manual: discovered.manual,
        success: true,
        errors: [],
        warnings: discovered.warnings,
      };
    } catch (error) {
      return {
        manualCallTemplate: raw,
        manual: stored.manual,
        success: false,
        errors: [this.#redactor.text(messageOf(error))],
        warnings: [],
      };
    }
  }

  // ------------------------------------------------------------------ catalog changes

  /**
   * Calls `listener` whenever a manual is saved or removed in this client's repository, including by other
   * processes sharing it (docs/design/repository-postgres.md). `resync` means changes may have been missed.
   * Returns a function that removes the listener.
   */
  onCatalogChange(listener: (event: CatalogChangeEvent) => void): () => void {
    this.#catalogListeners.add(listener);
    return () => this.#catalogListeners.delete(listener);
  }

  #onCatalogChange(event: CatalogChangeEvent): void {
    // What this client remembered about another client's manual may be stale now.
    if (!event.local) {
      if (event.manualName !== undefined) this.#allowed.delete(event.manualName);
      else this.#allowed.clear();
    }
    for (const listener of this.#catalogListeners) {
      try {
        listener(event);
      } catch (e) {
        this.#logger.warn('A catalog change listener threw', { error: messageOf(e) });
      }
    }
  }

  // ------------------------------------------------------------------ lookup and search

  /** The stored tool (raw template, no secrets), or undefined. */
  async getTool(name: string): Promise<Tool | undefined> {
    return this.#repo.getTool(name);
  }

  async getTools(): Promise<Tool[]> {
    return this.#repo.getTools();
  }

  async getManualNames(): Promise<string[]> {
    return this.#repo.getManualNames();
  }

  /** The stored manual template and manual (raw, no secrets). */
  async getManual(name: string) {
    return this.#repo.getManual(name);
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
    return this.#repo.searchTools(query ?? '', { limit, anyOfTagsRequired: opts.anyOfTagsRequired ?? null });
  }

  /**
   * The namespaced variable keys a manual template needs; when the template references none,
   * discovery runs and the keys referenced by its tool templates are returned.
   */
  async getRequiredVariablesForManualAndTools(template: CallTemplateBase | Record<string, unknown>): Promise<string[]> {
    this.#assertOpen();
    const normalized = (await this.#normalizeTemplate(template, [])) as unknown as CallTemplateBase;
    const issues = validateCallTemplate(normalized, '', { templates: this.#templates });
    if (issues.length > 0) throw new UtcpValidationError('manual call template', issues);
    const name = normalized.name ? sanitizeManualName(normalized.name) : randomUUID().replace(/-/g, '');
    const raw = { ...normalized, name };
    const keys = collectTemplateVariables(raw, name);
    const transport = await this.#transport(raw.call_template_type);
    const signal = this.#closing.signal;
    try {
      // The tools' own variables too (an OpenAPI spec's schemes, its base-URL variable), not only the template's.
      const { manual } = await this.#discover(transport, raw, raw, name, signal);
      for (const tool of manual.tools) collectTemplateVariables(tool.tool_call_template, name, keys);
    } catch (error) {
      // Discovery may need the template's own variables: then those are the answer.
      if (keys.length === 0) throw error;
    } finally {
      if (!(await this.#repo.getManual(name)))
        await transport.deregisterManual?.(raw, { manualName: name }).catch(() => {});
    }
    return keys;
  }

  /** The namespaced variable keys a registered tool's template needs. */
  async getRequiredVariablesForRegisteredTool(toolName: string): Promise<string[]> {
    requireString(toolName, 'A tool name');
    const tool = await this.#repo.getTool(toolName);
    if (!tool) throw await this.#notFound(toolName);
    return collectTemplateVariables(tool.tool_call_template, toolName.split('.')[0]);
  }

  // ------------------------------------------------------------------ calls

  async #prepare(name: string, args: JsonObject | undefined) {
    this.#assertOpen();
    requireString(name, 'A tool name');
    const tool = await this.#repo.getTool(name);
    if (!tool) throw await this.#notFound(name);
    const manualName = name.slice(0, name.indexOf('.'));
    const template = tool.tool_call_template;
    let allowed = this.#allowed.get(manualName);
    if (!allowed) {
      // Registered by another client of a shared repository: use what it recorded.
      const stored = this.#repo.getManualInfo
        ? await this.#repo.getManualInfo(manualName)
        : await this.#repo.getManual(manualName);
      allowed = stored?.allowedProtocols
        ? new Set(stored.allowedProtocols)
        : this.#allowedProtocols(stored?.template ?? template, false);
      // Cached until a catalog change event says the manual changed.
      if (stored && this.#repo.subscribe) this.#allowed.set(manualName, allowed);
    }
    {
      if (!allowed.has(template.call_template_type)) {
        throw new UtcpError(
          'PROTOCOL_NOT_ALLOWED',
          `Tool ${name} uses protocol "${template.call_template_type}", which manual ${manualName} does not allow [${[...allowed].join(', ')}]`,
        );
      }
    }
    const given: JsonObject = args ?? {};
    if (typeof given !== 'object' || Array.isArray(given))
      throw new UtcpArgumentsError(name, [{ path: '(arguments)', message: 'must be an object' }]);
    const callArgs = fillRequiredDefaults(tool.inputs, encodeBytes(given));
    if (this.#argValidator) {
      const issues = await this.#argValidator.validate(tool, callArgs);
      if (issues.length > 0) throw new UtcpArgumentsError(name, issues);
    }
    const substituted = this.#hasVariables(template) ? this.#substitute(template, manualName) : template;
    const transport = await this.#transport(template.call_template_type);
    let remoteSource = this.#remote.get(manualName);
    if (remoteSource === undefined) {
      // A repository filled by another process: judge by the stored manual template.
      const stored = await this.#repo.getManual(manualName);
      remoteSource = stored ? remoteTemplate(stored.template) : false;
      this.#remote.set(manualName, remoteSource);
    }
    return { tool, manualName, callArgs, substituted, transport, remoteSource };
  }

  /** Substitutes variables on a copy and remembers the values for redaction. */
  #substitute<T extends CallTemplateBase>(template: T, manualName: string): T {
    const used = new Set<string>();
    try {
      return substituteTemplate(template, manualName, this.#resolver, used);
    } finally {
      this.#redactor.add(used);
    }
  }

  /** Stored templates never change, so whether one references variables is computed once. */
  #hasVariables(template: CallTemplateBase): boolean {
    let has = this.#templateHasVars.get(template);
    if (has === undefined)
      this.#templateHasVars.set(template, (has = collectTemplateVariables(template, '_').length > 0));
    return has;
  }

  /**
   * One deadline per call (core/deadline.ts): linked by hand to the caller's signal, aborted by `close()`
   * through the in-flight set (no listener on a long-lived signal), armable so a transport's own
   * timeout (`withTimeout`) lands on this same signal instead of a second controller.
   */
  #openCall(options: CallToolOptions, name: string): Deadline {
    assertCallOptions(options, name);
    const deadline = createDeadline(options.signal, options.timeoutMs ?? this.#timeoutMs, `Tool ${name}`, {
      armable: true,
    });
    if (this.#closed) deadline.abort(new UtcpError('CLIENT_CLOSED', 'The client was closed'));
    else this.#inflight.add(deadline);
    return deadline;
  }

  #closeCall(call: Deadline, reason?: unknown): void {
    this.#inflight.delete(call);
    if (reason === undefined) call.dispose();
    else call.abort(reason);
  }

  /** The one place call errors leave the client: typed, and with every substituted value redacted. */
  #wrapError(error: unknown, signal: AbortSource, name: string, timeoutMs: number | undefined): unknown {
    const settled = settleError(error, signal, `Tool ${name}`, timeoutMs);
    if (settled instanceof UtcpError) return this.#redactor.error(settled);
    return this.#redactor.error(new TransportError(`Tool ${name} failed: ${messageOf(error)}`, { cause: error }));
  }

  #postProcess(result: unknown, tool: Tool, manualName: string, args: JsonObject): unknown {
    let r = result;
    for (const p of this.#post) r = p(r, { tool, manualName, args });
    return r;
  }

  /**
   * Calls a tool by its full name (`<manual>.<tool>`). `T` types the result for the caller; nothing checks it at
   * run time (a tool's `outputs` schema is documentation).
   * @throws ToolNotFoundError, UtcpArgumentsError, UtcpVariableNotFoundError, UtcpTimeoutError, UtcpAbortError,
   *   or the transport's typed error (HttpStatusError, CliExitError, ToolExecutionError, TransportError, ...).
   */
  async callTool<T = unknown>(name: string, args?: JsonObject, options: CallToolOptions = {}): Promise<T> {
    const { tool, manualName, callArgs, substituted, transport, remoteSource } = await this.#prepare(name, args);
    const call = this.#openCall(options, name);
    const { timeoutMs } = call;
    let result: unknown;
    try {
      if (call.aborted) throw abortError(call, `Tool ${name}`, timeoutMs);
      result = await transport.callTool(
        tool,
        callArgs,
        substituted,
        this.#callOptions(call, options, tool, manualName, remoteSource),
      );
    } catch (error) {
      throw this.#wrapError(error, call, name, timeoutMs);
    } finally {
      this.#closeCall(call);
    }
    return this.#postProcess(result, tool, manualName, callArgs) as T;
  }

  /**
   * A transport's options for one call. `signal` is built on first read (docs/design/http-exchange.md#deadlines):
   * transports that follow the call through its attached scope (the HTTP exchange) never create one.
   */
  #callOptions(
    call: Deadline,
    options: CallToolOptions,
    tool: Tool,
    manualName: string,
    remoteSource: boolean,
  ): CallOptions {
    return attachCallScope(
      {
        get signal() {
          return call.signal;
        },
        onProgress: options.onProgress,
        manualName,
        rawTemplate: tool.tool_call_template,
        timeoutMs: call.timeoutMs,
        raw: options.raw,
        remoteSource,
      },
      call,
    );
  }

  /**
   * Calls a tool and yields its results as they arrive. One-shot protocols yield exactly one item.
   * Breaking out of the loop cancels the call.
   */
  async *callToolStreaming<T = unknown>(
    name: string,
    args?: JsonObject,
    options: CallToolOptions = {},
  ): AsyncGenerator<T, void, undefined> {
    const { tool, manualName, callArgs, substituted, transport, remoteSource } = await this.#prepare(name, args);
    const call = this.#openCall(options, name);
    const { timeoutMs } = call;
    const callOptions = this.#callOptions(call, options, tool, manualName, remoteSource);
    try {
      if (transport.callToolStream) {
        for await (const item of transport.callToolStream(tool, callArgs, substituted, callOptions)) {
          yield this.#postProcess(item, tool, manualName, callArgs) as T;
        }
      } else {
        const result = await transport.callTool(tool, callArgs, substituted, callOptions);
        yield this.#postProcess(result, tool, manualName, callArgs) as T;
      }
    } catch (error) {
      throw this.#wrapError(error, call, name, timeoutMs);
    } finally {
      this.#closeCall(call, new UtcpError('ABORTED', 'Stream consumer stopped'));
    }
  }

  // ------------------------------------------------------------------ shutdown

  /** `await using client = await UtcpClient.create(...)` closes the client when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes every transport (sessions, sockets, child processes) of this client. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new UtcpError('CLIENT_CLOSED', 'The client was closed');
    this.#closing.abort(closed);
    for (const call of this.#inflight) call.abort(closed);
    this.#inflight.clear();
    const hooks = [...this.#onClose];
    this.#onClose.clear();
    await Promise.all(
      hooks.map(async (hook) => {
        try {
          await hook();
        } catch (e) {
          this.#logger.warn('A close hook failed', { error: messageOf(e) });
        }
      }),
    );
    const transports = await Promise.all([...this.#transports.values()].map((t) => t.catch(() => undefined)));
    await Promise.all(
      transports.map((t) =>
        t?.close().catch((e) => this.#logger.warn(`Closing transport ${t.type} failed`, { error: messageOf(e) })),
      ),
    );
    this.#transports.clear();
    for (const { value, dispose } of this.#shared.values()) {
      try {
        await dispose?.(value);
      } catch (e) {
        this.#logger.warn('Disposing a shared resource failed', { error: messageOf(e) });
      }
    }
    this.#shared.clear();
    this.#unsubscribe?.();
    this.#catalogListeners.clear();
    if (this.#ownsRepo)
      await this.#repo
        .close?.()
        .catch((e) => this.#logger.warn('Closing the tool repository failed', { error: messageOf(e) }));
  }

  /**
   * Runs `hook` when this client closes (after in-flight calls are aborted, before transports close), so code that
   * registers functions can stop what they started (child processes, servers). Errors go to the logger.
   * Returns a disposer that unregisters the hook. @throws UtcpError CLIENT_CLOSED when the client is already closed
   */
  onClose(hook: () => void | Promise<void>): () => void {
    this.#assertOpen();
    this.#onClose.add(hook);
    return () => void this.#onClose.delete(hook);
  }

  get closed(): boolean {
    return this.#closed;
  }
}
