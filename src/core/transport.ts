/**
 * The transport contract: one small interface every protocol plugin implements,
 * and the per-client context it is created with.
 */
import type { CallTemplateBase, JsonObject, Tool } from './types.js';
import type { Logger } from './logger.js';
import type { Limits } from './limits.js';
import type { CallTemplateSpec } from './template.js';
import type { LookupFunction } from 'node:net';
import type { ResolvedResilience } from './resilience.js';

/** Progress reported by a running tool (MCP progress notifications, streamed bytes, ...). */
export interface ProgressEvent {
  progress: number;
  total?: number;
  message?: string;
}

/** What a transport receives for each discovery or call. */
export interface CallOptions {
  /**
   * Cancels the work: it aborts when the caller aborts, when the call's deadline (`timeoutMs`) passes, or when the
   * client closes, and its `reason` is then the typed error (`UtcpTimeoutError` for a deadline, `UtcpError` with
   * code `CLIENT_CLOSED` on close). Honour it with the helpers of the root entry `utcp-kit`
   * (docs/design/adding-a-transport.md#external-deadlines): pass it to every fetch, socket and child process you
   * start, or follow it with `onAbort(signal, hook)` (returns the remover: call it when the work is over); add a
   * protocol timeout with `withTimeout(signal, ms, what)` (cheap on the client's call signal); turn an abort into
   * the error to throw with `abortError`, `throwIfAborted`, `settleError` or `raceSignal`.
   */
  signal: AbortSignal;
  /** Receives progress notifications, when the protocol has them. */
  onProgress?: (event: ProgressEvent) => void;
  /** The caller's gate for calls made on behalf of this one (`CallToolOptions.callGate`); only `direct` passes it on. */
  callGate?: CallGate;
  /** The sanitised manual name this discovery or call belongs to. */
  manualName: string;
  /**
   * The raw (unsubstituted) template. Anything a transport copies into generated tools
   * must come from here, so that secrets never reach the repository.
   */
  rawTemplate: CallTemplateBase;
  /**
   * Return the protocol's own result envelope instead of the mapped value, where the protocol has one
   * (MCP: the `CallToolResult`, `isError` included, never a ToolExecutionError). Others ignore it.
   */
  raw?: boolean;
  /** Caller-imposed deadline in ms, if any (already folded into `signal`); transports use it for messages. */
  timeoutMs?: number;
  /**
   * When that deadline passes, as a `Date.now()` time (absent without one; already folded into `signal`).
   * For a protocol that carries its own deadline: `remainingMs(options)` is the time left.
   */
  deadline?: number;
  /**
   * The tool belongs to a manual fetched from a remote origin (docs/design/threat-model.md#remote-loopback-call-time): its final,
   * substituted target and every redirect hop and resolved address must not be loopback.
   */
  remoteSource?: boolean;
  /**
   * The retry and circuit-breaker settings of this call (docs/design/resilience.md#config), resolved from the client,
   * the manual's template and the tool's template. Transports that can tell a transient failure apply them (the
   * `http` transport); absent: the defaults (2 retries, no breaker).
   */
  resilience?: ResolvedResilience;
}

/** What discovery returns: a document holding a `tools` array (normalised and validated by the client). */
export interface DiscoveryResult {
  manual: unknown;
  /** Non-fatal problems (skipped operations, failed servers, dropped tools). */
  warnings?: string[];
  /** True when the document was an OpenAPI spec: `http` tools are then allowed by default (docs/design/manual-format.md#allowed-protocols). */
  openapi?: boolean;
  /** True when the document came from a remote (non-loopback) origin; the client remembers it with the tools. */
  remoteSource?: boolean;
}

export interface Transport<T extends CallTemplateBase = CallTemplateBase> {
  /** The `call_template_type` served, e.g. "http". */
  readonly type: string;
  /** Discovers the tools of a manual. `template` is substituted; `options.rawTemplate` is raw. */
  registerManual(template: T, options: CallOptions): Promise<DiscoveryResult>;
  /** Calls one tool. `template` is the tool's substituted call template. Throws typed errors. */
  callTool(tool: Tool, args: JsonObject, template: T, options: CallOptions): Promise<unknown>;
  /** Optional. When absent, the client streams the single result of callTool. */
  callToolStream?(tool: Tool, args: JsonObject, template: T, options: CallOptions): AsyncIterable<unknown>;
  /** Frees what one manual holds (sessions, connections, processes). */
  deregisterManual?(template: T, options: { manualName: string }): Promise<void>;
  /** Frees sockets and processes. Calling it twice is safe. */
  close(): Promise<void>;
}

/** Converts an OpenAPI document into a UTCP manual (supplied by the composition root). */
export interface OpenApiConverterOptions {
  /** The manual name; generated tool templates carry it. */
  manualName: string;
  /** Where the document came from: an http(s) URL, a `file:` URL, or undefined for inline text. */
  specUrl?: string;
  /** Trusted base URL override (text/file templates). */
  baseUrl?: string | null;
  /** Raw auth for generated tools (docs/design/openapi.md#security-schemes). */
  authTools?: unknown;
  /** The template's own `auth` and static `headers`, applied to tools per `openapi_auth` (docs/design/openapi.md#manual-auth). */
  manualAuth?: unknown;
  manualHeaders?: unknown;
  /** `openapi_auth` of the template: "fill" (default) or "override". */
  authMode?: unknown;
  filter?: unknown;
  limits?: Partial<Limits>;
}

export type OpenApiConverter = (
  document: Record<string, unknown>,
  options: OpenApiConverterOptions,
) => Promise<{ manual: unknown; warnings: string[] }>;

/** A function registered on one client and called by the `direct` transport. */
export interface DirectCallable {
  (
    args: JsonObject,
    context: { signal: AbortSignal; onProgress?: (event: ProgressEvent) => void; callGate?: CallGate },
  ): unknown;
}

/**
 * Decides each tool call made on behalf of an outer call (the calls of a code-mode script): resolves to the
 * arguments to run with (possibly changed) or rejects to refuse the call. The agent loop sets one from its approval
 * policy (docs/design/code-mode.md#approvals).
 */
export type CallGate = (
  request: { toolName: string; args: JsonObject },
  options: { signal: AbortSignal },
) => JsonObject | Promise<JsonObject>;

/** Everything a transport gets from its client. Nothing here is shared with another client. */
export interface TransportContext {
  /** Directory that anchors relative paths (file manuals, CLI working_dir, MCP cwd, .proto files). */
  rootDir: string;
  logger: Logger;
  limits: Limits;
  /** Lazily loaded OpenAPI converter; throws a clear error when unavailable. */
  convertOpenApi: OpenApiConverter;
  /** In-process functions of this client, by `<manual>.<name>` and by bare callable name. */
  callables: ReadonlyMap<
    string,
    {
      callable: DirectCallable;
      description?: string;
      inputs?: unknown;
      outputs?: unknown;
      tags?: string[];
      manual?: string;
    }
  >;
  /**
   * Per-client memo for resources shared between this client's transports
   * (e.g. one HTTP connection pool, one OAuth token cache). Disposers run on client close.
   */
  shared<V>(key: string, create: () => V, dispose?: (value: V) => void | Promise<void>): V;
  /** Resolves host names for every connection (HTTP family, WebSocket, TCP, UDP). @default dns.lookup */
  lookup?: LookupFunction;
  /**
   * Start cli shells and MCP stdio servers in a PID namespace of their own where the machine allows
   * (docs/design/threat-model.md#process-trees). @default true
   */
  pidNamespaces?: boolean;
  /** Asks the client to re-discover a manual (e.g. MCP `tools/list_changed`). */
  requestRefresh(manualName: string): void;
}

/** Creates one transport instance for one client. May be async so heavy modules load lazily. */
export type TransportFactory = (context: TransportContext) => Transport<any> | Promise<Transport<any>>;

/** A template validator generated at build time (see `TransportDefinition.precompiledTemplate`). */
export interface PrecompiledTemplate {
  /** `JSON.stringify` of the schema the validator was generated from. */
  readonly schema: string;
  /** The generated validator (Ajv's calling convention: returns whether valid, sets `errors` when not). */
  readonly validate: (value: unknown) => boolean;
}

/**
 * A transport as the client receives it: how to create it, and the spec of its call template (loaded on first
 * use, so heavy schema code never runs at import). Built-ins are listed in `src/transports/builtin.ts`.
 */
export interface TransportDefinition<T extends CallTemplateBase = CallTemplateBase> {
  /** Creates the transport for one client. */
  create(context: TransportContext): Transport<T> | Promise<Transport<T>>;
  /** The template spec (core/template.ts). Without one, only the base fields are validated. */
  template?(): CallTemplateSpec<T> | Promise<CallTemplateSpec<T>>;
  /**
   * A validator of the template schema generated at build time (Ajv standalone code), loaded instead of compiling
   * the schema with Ajv at run time; used only when its `schema` text equals the spec's schema, else ignored. The
   * built-in transports have one (docs/design/performance.md#precompiled-templates); other transports leave it out.
   */
  precompiledTemplate?(): Promise<PrecompiledTemplate | undefined>;
  /** Legacy v0.1 names of this type (`http_sse` for `sse`), rewritten before validation. */
  legacyTypes?: readonly string[];
}
