/**
 * The state one UTCP client shares between its parts (docs/design/README.md#client-layout): repository, template
 * registry, transports, variables, redaction, per-manual memory, in-flight calls, and shutdown. Registration
 * (`client-registration.ts`) and calls (`client-calls.ts`) work on it; `UtcpClientBase` (`client.ts`) is the facade.
 * Internal: not exported from the package.
 */
import { ArgumentValidator } from './arguments.js';
import type { LoadedConfig } from './config.js';
import type { ClientDefaults, UtcpClientOptions } from './client-types.js';
import { DotenvSource } from './dotenv.js';
import { ToolNotFoundError, UtcpError, UtcpValidationError } from './errors.js';
import { validateResilience, type ConcurrencyLimiter, type ResilienceConfig } from './resilience.js';
import { normalizeCallTemplate } from './legacy.js';
import { resolveLimits, type Limits } from './limits.js';
import { completeLogger, type Logger } from './logger.js';
import { redactingLogger, Redactor } from './redact.js';
import { postProcessorFromConfig, type PostProcessorFn } from './post-processors.js';
import { suggestToolNames } from './suggest.js';
import type { CatalogChangeEvent, ToolRepository } from './repository.js';
import { scopeController, type Deadline } from './deadline.js';
import type { DirectCallable, Transport, TransportContext } from './transport.js';
import { TemplateRegistry } from './template-registry.js';
import type { CallTemplateBase } from './types.js';
import { isLoopbackLike } from './url-policy.js';
import { VariableResolver, resolveValue, substituteTemplate, type VariableSource } from './variables.js';
import { errorMessage } from './guards.js';

/** A callable registered with `registerFunctions` or `registerCallable`. */
export interface CallableEntry {
  callable: DirectCallable;
  description?: string;
  inputs?: unknown;
  outputs?: unknown;
  tags?: string[];
  manual?: string;
}

/** JavaScript callers may pass anything: a name that is not a string is INVALID_ARGUMENTS, not a TypeError later. */
export function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw new UtcpError('INVALID_ARGUMENTS', `${what} must be a string, not ${value === null ? 'null' : typeof value}`);
  return value;
}

/**
 * Provenance of a manual from its template alone (when the transport did not report it): a template
 * naming a non-loopback `url` or `host` is remote. Placeholders count as remote (they are not loopback literals).
 */
export function remoteTemplate(template: CallTemplateBase): boolean {
  const t = template as unknown as Record<string, unknown>;
  const target = typeof t.url === 'string' ? t.url : typeof t.host === 'string' ? t.host : undefined;
  return target !== undefined && target.trim() !== '' && !isLoopbackLike(target.trim());
}

export class ClientCore {
  readonly repo: ToolRepository;
  readonly templates: TemplateRegistry;
  readonly transports = new Map<string, Promise<Transport>>();
  /** The transports of `transports` once created, for calls that need not await (docs/design/http-exchange.md#per-call-cost). */
  readonly readyTransports = new Map<string, Transport>();
  readonly resolver: VariableResolver;
  readonly logger: Required<Logger>;
  /** Every value this client substituted; errors and log lines leave the client through it. */
  readonly redactor = new Redactor();
  readonly limits: Limits;
  readonly post: PostProcessorFn[];
  readonly argValidator: ArgumentValidator | undefined;
  readonly timeoutMs: number | undefined;
  readonly reserved = new Set<string>();
  readonly allowed = new Map<string, ReadonlySet<string>>();
  /** Per manual: tools left out at registration, with the reason, so a later call can say why it is missing. */
  readonly dropped = new Map<string, Map<string, string>>();
  /** Provenance per manual: true when its document came from a remote origin (docs/design/threat-model.md#remote-loopback-call-time). */
  readonly remote = new Map<string, boolean>();
  /** The client's `resilience` layers: config, then options (docs/design/resilience.md#config). */
  readonly resilienceLayers: readonly ResilienceConfig[];
  /** Each manual template's `resilience` (null: none), known from registration or read from the repository. */
  readonly manualResilience = new Map<string, ResilienceConfig | null>();
  /** Per-manual concurrency limits (docs/design/resilience.md#concurrency). */
  readonly limiters = new Map<string, ConcurrencyLimiter>();
  readonly templateHasVars = new WeakMap<CallTemplateBase, boolean>();
  readonly shared = new Map<string, { value: unknown; dispose?: (v: any) => void | Promise<void> }>();
  readonly callables = new Map<string, CallableEntry>();
  readonly closing = scopeController();
  readonly inflight = new Set<Deadline>();
  readonly onClose = new Set<() => void | Promise<void>>();
  readonly context: TransportContext;
  /** True when this client built the repository from its config, so `close()` closes it. */
  readonly ownsRepo: boolean;
  readonly catalogListeners = new Set<(event: CatalogChangeEvent) => void>();
  readonly unsubscribe: (() => void) | undefined;
  closed = false;

  /** `refresh` re-runs discovery of a manual when a transport asks (`TransportContext.requestRefresh`). */
  constructor(
    rootDir: string,
    loaded: LoadedConfig,
    options: UtcpClientOptions,
    defaults: ClientDefaults,
    refresh: (manualName: string) => Promise<unknown>,
  ) {
    const resilienceIssues = validateResilience(options.resilience, 'resilience');
    if (resilienceIssues.length > 0)
      throw new UtcpValidationError('client options', resilienceIssues, 'INVALID_CONFIG');
    this.resilienceLayers = [loaded.config.resilience, options.resilience].filter((l) => !!l) as ResilienceConfig[];
    this.logger = redactingLogger(completeLogger(options.logger), this.redactor);
    for (const w of loaded.warnings) this.logger.warn(w);
    this.limits = resolveLimits(loaded.config.limits);
    this.templates = new TemplateRegistry({ ...defaults.transports, ...(options.transports ?? {}) });
    const sources: VariableSource[] = (loaded.config.load_variables_from ?? []).map(
      (l) => new DotenvSource(l.env_file_path, rootDir),
    );
    this.resolver = new VariableResolver(
      loaded.config.variables ?? {},
      [...sources, ...(options.variableSources ?? [])],
      options.env ?? process.env,
    );
    this.ownsRepo = !options.repository;
    this.repo =
      options.repository ??
      defaults.createRepository(loaded.config, {
        rootDir,
        logger: this.logger,
        resolveValue: (v) => resolveValue(v, this.resolver),
      });
    this.unsubscribe = this.repo.subscribe?.((event) => this.#onCatalogChange(event));
    this.post = [...loaded.postProcessing.map(postProcessorFromConfig), ...(options.postProcessors ?? [])];
    this.argValidator = options.validateArguments === false ? undefined : new ArgumentValidator(this.logger);
    this.timeoutMs = options.timeoutMs;
    const convert = defaults.convertOpenApi;
    this.context = {
      rootDir,
      logger: this.logger,
      limits: this.limits,
      convertOpenApi: (doc, opts) => convert(doc, { limits: this.limits, ...opts }),
      callables: this.callables,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      ...(options.pidNamespaces === false ? { pidNamespaces: false } : {}),
      shared: <V>(key: string, create: () => V, dispose?: (value: V) => void | Promise<void>): V => {
        let entry = this.shared.get(key);
        if (!entry) this.shared.set(key, (entry = { value: create(), dispose }));
        return entry.value as V;
      },
      requestRefresh: (manualName) => {
        refresh(manualName).catch((e) =>
          this.logger.warn(`Refreshing manual ${manualName} failed`, { error: errorMessage(e) }),
        );
      },
    };
  }

  // ------------------------------------------------------------------ catalog changes

  #onCatalogChange(event: CatalogChangeEvent): void {
    // What this client remembered about another client's manual may be stale now.
    if (!event.local) {
      if (event.manualName !== undefined) {
        this.allowed.delete(event.manualName);
        this.manualResilience.delete(event.manualName);
      } else {
        this.allowed.clear();
        this.manualResilience.clear();
      }
    }
    for (const listener of this.catalogListeners) {
      try {
        listener(event);
      } catch (e) {
        this.logger.warn('A catalog change listener threw', { error: errorMessage(e) });
      }
    }
  }

  // ------------------------------------------------------------------ transports and templates

  /** Legacy normalisation of a template, after loading the template specs of the types it involves. */
  async normalizeTemplate(template: unknown, warnings: string[], where?: string): Promise<Record<string, unknown>> {
    const { value, notes } = await this.templates.prepared(
      () => {
        const notes: string[] = [];
        return {
          value: normalizeCallTemplate(template, notes, where, this.templates) as Record<string, unknown>,
          notes,
        };
      },
      (r) => [r.value?.call_template_type],
    );
    warnings.push(...notes);
    return value;
  }

  transport(type: string): Promise<Transport> {
    let t = this.transports.get(type);
    if (!t) {
      const definition = this.templates.definition(type);
      if (!definition)
        return Promise.reject(
          new UtcpError(
            'UNKNOWN_TRANSPORT',
            `No transport for call_template_type "${type}"; known types: ${this.templates.types.join(', ')}`,
          ),
        );
      const created = (t = Promise.resolve().then(() => definition.create(this.context)));
      created.then(
        (transport) => {
          if (this.transports.get(type) === created && !this.closed) this.readyTransports.set(type, transport);
        },
        () => this.transports.delete(type),
      );
      this.transports.set(type, t);
    }
    return t;
  }

  assertOpen(): void {
    if (this.closed) throw new UtcpError('CLIENT_CLOSED', 'This UtcpClient is closed');
  }

  /** Substitutes variables on a copy and remembers the values for redaction. */
  substitute<T extends CallTemplateBase>(template: T, manualName: string): T {
    const used = new Set<string>();
    try {
      return substituteTemplate(template, manualName, this.resolver, used);
    } finally {
      this.redactor.add(used);
    }
  }

  allowedProtocols(raw: CallTemplateBase, fromOpenApi: boolean): Set<string> {
    const list = raw.allowed_communication_protocols;
    if (list && list.length > 0) return new Set(list);
    const set = new Set([raw.call_template_type]);
    if (fromOpenApi) set.add('http');
    return set;
  }

  /** A ToolNotFoundError that says why (dropped at registration) or suggests close names. */
  async notFound(name: string): Promise<ToolNotFoundError> {
    const dot = name.indexOf('.');
    const reason = dot > 0 ? this.dropped.get(name.slice(0, dot))?.get(name) : undefined;
    if (reason) return new ToolNotFoundError(name, [], reason);
    const names = (await this.repo.getTools()).map((t) => t.name);
    return new ToolNotFoundError(name, suggestToolNames(name, names));
  }

  // ------------------------------------------------------------------ shutdown

  /** Closes every transport (sessions, sockets, child processes) of this client. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closed = new UtcpError('CLIENT_CLOSED', 'The client was closed');
    this.closing.abort(closed);
    for (const call of this.inflight) call.abort(closed);
    this.inflight.clear();
    const hooks = [...this.onClose];
    this.onClose.clear();
    await Promise.all(
      hooks.map(async (hook) => {
        try {
          await hook();
        } catch (e) {
          this.logger.warn('A close hook failed', { error: errorMessage(e) });
        }
      }),
    );
    const transports = await Promise.all([...this.transports.values()].map((t) => t.catch(() => undefined)));
    await Promise.all(
      transports.map((t) =>
        t?.close().catch((e) => this.logger.warn(`Closing transport ${t.type} failed`, { error: errorMessage(e) })),
      ),
    );
    this.transports.clear();
    this.readyTransports.clear();
    for (const { value, dispose } of this.shared.values()) {
      try {
        await dispose?.(value);
      } catch (e) {
        this.logger.warn('Disposing a shared resource failed', { error: errorMessage(e) });
      }
    }
    this.shared.clear();
    this.unsubscribe?.();
    this.catalogListeners.clear();
    if (this.ownsRepo)
      await this.repo
        .close?.()
        .catch((e) => this.logger.warn('Closing the tool repository failed', { error: errorMessage(e) }));
  }
}
