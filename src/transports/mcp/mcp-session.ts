import type {
  Client,
  RequestOptions,
  Resource,
  Tool as McpTool,
  Transport as SdkTransport,
} from '@modelcontextprotocol/client';
import { ToolExecutionError, TransportError, UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { type AbortSource, abortError, raceSignal, scopeController, subscribeAbort } from '../../core/deadline.js';
import type { ProgressEvent, TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../shared/auth.js';
import { buildChildEnv } from '../shared/child-env.js';
import { createMcpFetch, newHttpConnectionState, type HttpConnectionState } from './create-mcp-fetch.js';
import type { McpSdk } from './load-mcp-sdk.js';
import type { McpToolResult } from './map-tool-result.js';
import { McpServerError } from './mcp-server-error.js';
import {
  DEFAULT_MCP_TIMEOUT_SECONDS,
  type HttpServer,
  type ResolvedServer,
  type StdioServer,
} from './resolve-server-config.js';
import { STDERR_TAIL_CHARS, StdioProcessTransport } from './stdio-process-transport.js';
import { clientPidNamespace } from '../shared/pid-namespace.js';

/** How long closing an HTTP session waits for the server to acknowledge its DELETE, in ms. */
const TERMINATE_SESSION_WAIT_MS = 1000;
/** Longest wait for the answer to the protocol version probe (a silent stdio server is a legacy one), in ms. */
const PROBE_TIMEOUT_MS = 10_000;
const CLIENT_INFO = { name: 'utcp-kit', version: '0.1.0' };
/** Spare request signals kept per session for reuse (docs/design/transports.md#mcp-call-path). */
const MAX_SPARE_CONTROLLERS = 16;

/** One live MCP connection (a child process or an HTTP session) and what is known about its health. */
interface Connection {
  client: Client;
  transport: SdkTransport;
  kind: 'stdio' | 'streamable-http' | 'sse';
  /** The transport closed (process exited, stream ended, or we closed it). */
  closed: boolean;
  stdio?: StdioProcessTransport;
  stderr: () => string;
  http?: HttpConnectionState;
  /** The SDK's `CallToolResult` schema, passed to `request()` (saves the SDK's per-call schema lookup). */
  callToolResultSchema: McpSdk['callToolResultSchema'];
  /** A `tools/list` completed on this connection: later `list_changed` notifications are real changes. */
  listed: boolean;
}

/** What a transport factory provides; `#initialize` adds the client and the state. */
type ConnectionParts = Omit<Connection, 'client' | 'closed' | 'listed' | 'callToolResultSchema'>;

export interface McpSessionOptions {
  manualName: string;
  server: ResolvedServer;
  /** The manual's substituted auth (HTTP servers only). */
  auth: Auth | null | undefined;
  /** Identifies the configuration the session was opened with; a different one needs a new session. */
  fingerprint: string;
  ctx: TransportContext;
  /** The session serves a tool of a remote-sourced manual: HTTP requests go through the dial guard. */
  remoteSource?: boolean;
  loadSdk: () => Promise<McpSdk>;
  /** The server said its tool list changed (after this session had listed it). */
  onListChanged: () => void;
}

/** Per-call settings. */
export interface SessionCallOptions {
  /** What aborts the operation: the client's per-call deadline (no `AbortSignal` is built for it) or a signal. */
  scope: AbortSource;
  /** The caller's deadline (already part of `scope`), for messages and to decide whether progress is needed. */
  timeoutMs?: number;
  onProgress?: (event: ProgressEvent) => void;
}

/** What a paginated listing returns. */
export interface Listing<T> {
  items: T[];
  warnings: string[];
}

/**
 * One persistent session with one MCP server for one manual of one client (docs/design/transports.md#mcp):
 * opened lazily, shared by concurrent calls, re-opened after a crash or an expired HTTP session
 * (one reconnect-and-retry per request), and closed without leaving processes or timers.
 */
export class McpSession {
  readonly manualName: string;
  readonly server: ResolvedServer;
  readonly fingerprint: string;
  readonly #opts: McpSessionOptions;
  readonly #closing = scopeController();
  #current: Connection | undefined;
  #connecting: Promise<Connection> | undefined;
  #closed: Promise<void> | undefined;
  #toolNames: Set<string> | undefined;
  #resources: Map<string, Resource> | undefined;
  /** Set once a stdio server turned out to end on the version probe: later starts skip the probe. */
  #stdioEra: 'legacy' | undefined;
  /** Set when an HTTP server refused the version probe: later connections skip it. */
  #httpEra: 'legacy' | undefined;
  /** Request signals of finished requests, never aborted, that the SDK no longer listens to: reused by later requests. */
  readonly #spareControllers: AbortController[] = [];

  constructor(opts: McpSessionOptions) {
    this.#opts = opts;
    this.manualName = opts.manualName;
    this.server = opts.server;
    this.fingerprint = opts.fingerprint;
  }

  /**
   * The handshake includes starting the process (or reaching the HTTP server), which can take far
   * longer than a request (`npx` installs), so it gets at least the default timeout.
   */
  get #initTimeoutMs(): number {
    return Math.max(this.server.timeoutMs, DEFAULT_MCP_TIMEOUT_SECONDS * 1000);
  }

  get #label(): string {
    return `MCP server '${this.server.name}'`;
  }

  /** The pid of the running stdio server, if any (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.#current && !this.#current.closed ? this.#current.stdio?.pid : undefined;
  }

  /** The protocol version negotiated on the live connection, if any (for tests and diagnostics). */
  get protocolVersion(): string | undefined {
    return this.#current && !this.#current.closed ? this.#current.client.getNegotiatedProtocolVersion() : undefined;
  }

  // ------------------------------------------------------------------ operations

  /** `tools/list`, following `nextCursor` until it ends, repeats, or `limits.max_list_pages` is reached. */
  async listTools(options: SessionCallOptions): Promise<Listing<McpTool>> {
    const listing = await this.#paginate('tools/list', options, (conn, cursor, req) =>
      conn.client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, req).then((r) => {
        conn.listed = true;
        return { items: r.tools, nextCursor: r.nextCursor };
      }),
    );
    this.#toolNames = new Set(listing.items.map((t) => t.name));
    return listing;
  }

  /** `resources/list`, paginated like `listTools`. */
  async listResources(options: SessionCallOptions): Promise<Listing<Resource>> {
    const listing = await this.#paginate('resources/list', options, (conn, cursor, req) =>
      conn.client
        .request({ method: 'resources/list', params: cursor === undefined ? {} : { cursor } }, req)
        .then((r) => ({ items: r.resources, nextCursor: r.nextCursor })),
    );
    this.#resources = new Map(listing.items.map((r) => [r.name, r]));
    return listing;
  }

  /** Whether the server offers a tool of that name (lists the tools once if not yet known). */
  async hasTool(name: string, options: SessionCallOptions): Promise<boolean> {
    if (!this.#toolNames) await this.listTools(options);
    return this.#toolNames!.has(name);
  }

  /** The resource of that name, listing resources when it is not in the last listing. */
  async findResource(name: string, options: SessionCallOptions): Promise<Resource | undefined> {
    const known = this.#resources?.get(name);
    if (known) return known;
    await this.listResources(options);
    return this.#resources!.get(name);
  }

  /** `tools/call` with progress, cancellation and the server's per-request timeout. Returns the raw result. */
  callTool(name: string, args: Record<string, unknown>, options: SessionCallOptions): Promise<McpToolResult> {
    return this.#run('tools/call', name, options, (conn, req) =>
      conn.client.request({ method: 'tools/call', params: { name, arguments: args } }, conn.callToolResultSchema, req),
    ) as Promise<McpToolResult>;
  }

  /** `resources/read`; returns `{contents}`. */
  async readResource(uri: string, options: SessionCallOptions): Promise<{ contents: unknown[] }> {
    const result = await this.#run('resources/read', uri, options, (conn, req) =>
      conn.client.request({ method: 'resources/read', params: { uri } }, req),
    );
    return { contents: result.contents };
  }

  /** Ends the connection (and the child process). Safe to call twice; later operations fail. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing.abort(new UtcpError('CLIENT_CLOSED', `${this.#label} session closed`));
      const pending = this.#connecting;
      if (pending) await pending.catch(() => undefined);
      const conn = this.#current;
      this.#current = undefined;
      if (conn) await this.#closeConnection(conn);
    })();
    return this.#closed;
  }

  // ------------------------------------------------------------------ requests

  async #paginate<T>(
    method: string,
    options: SessionCallOptions,
    page: (
      conn: Connection,
      cursor: string | undefined,
      req: RequestOptions,
    ) => Promise<{ items: T[]; nextCursor?: string }>,
  ): Promise<Listing<T>> {
    const maxPages = this.#opts.ctx.limits.max_list_pages;
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let n = 0; n < maxPages; n++) {
      const result = await this.#run(method, undefined, options, (conn, req) => page(conn, cursor, req));
      items.push(...result.items);
      const next = result.nextCursor;
      if (next === undefined || next === null || next === '') return { items, warnings: [] };
      if (seen.has(next)) {
        return {
          items,
          warnings: [`${this.#label}: ${method} repeated a pagination cursor; stopped after ${n + 1} pages`],
        };
      }
      seen.add(next);
      cursor = next;
    }
    return {
      items,
      warnings: [
        `${this.#label}: ${method} still had more pages after ${maxPages} (limits.max_list_pages); the rest was ignored`,
      ],
    };
  }

  /**
   * Runs one request on the live connection (opening it if needed). A connection failure
   * (process gone, transport closed, HTTP 404 for an expired session, reset, 401 with OAuth2)
   * reopens the connection and retries once. `method` and `subject` name the request in messages.
   *
   * The hot path (docs/design/transports.md#mcp-call-path) builds no `AbortSignal` for the caller's deadline: the
   * SDK gets a reused controller of this session that the deadline aborts through a hook.
   */
  #run<T>(
    method: string,
    subject: string | undefined,
    options: SessionCallOptions,
    request: (conn: Connection, req: RequestOptions) => Promise<T>,
  ): Promise<T> {
    // The common case, an open session and a live caller, is one promise chain: no async frame, no race.
    const conn =
      !options.scope.aborted && !this.#closed && this.#current && !this.#current.closed ? this.#current : undefined;
    if (!conn) return this.#runFrom(0, method, subject, options, request);
    const controller = this.#spareControllers.pop() ?? new AbortController();
    const unlink = subscribeAbort(options.scope, (reason) => controller.abort(reason));
    let pending: Promise<T>;
    try {
      pending = request(conn, this.#requestOptions(controller.signal, options));
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (value) => {
        this.#release(controller, unlink);
        return value;
      },
      (error: unknown) => {
        this.#release(controller, unlink);
        return this.#recover(error, conn, 0, method, subject, options, request);
      },
    );
  }

  /** The general path of `#run` from attempt `first`: opens the connection when needed, retries once. */
  async #runFrom<T>(
    first: number,
    method: string,
    subject: string | undefined,
    options: SessionCallOptions,
    request: (conn: Connection, req: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const scope = options.scope;
    if (scope.aborted) throw abortError(scope, this.#requestLabel(method, subject), options.timeoutMs);
    const open = !this.#closed && this.#current && !this.#current.closed ? this.#current : undefined;
    const conn =
      open ?? (await raceSignal(this.#connection(), scope, this.#requestLabel(method, subject), options.timeoutMs));
    const controller = this.#spareControllers.pop() ?? new AbortController();
    const unlink = subscribeAbort(scope, (reason) => controller.abort(reason));
    try {
      return await request(conn, this.#requestOptions(controller.signal, options));
    } catch (error) {
      return this.#recover(error, conn, first, method, subject, options, request);
    } finally {
      this.#release(controller, unlink);
    }
  }

  /**
   * A failed request: the caller's abort wins; a connection failure on the first attempt reopens the connection and
   * retries once; anything else becomes a typed error.
   */
  async #recover<T>(
    error: unknown,
    conn: Connection,
    attempt: number,
    method: string,
    subject: string | undefined,
    options: SessionCallOptions,
    request: (conn: Connection, req: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const scope = options.scope;
    if (scope.aborted) throw abortError(scope, this.#requestLabel(method, subject), options.timeoutMs);
    const what = subject === undefined ? method : `${method} ${subject}`;
    if (attempt === 0 && !this.#closed && this.#isConnectionFailure(conn)) {
      this.#opts.ctx.logger.debug?.(`${this.#label}: connection failed during ${what}; reconnecting`, {
        manual: this.manualName,
      });
      this.#drop(conn);
      return this.#runFrom(1, method, subject, options, request);
    }
    throw await this.#mapError(error, conn, what, method === 'tools/call' ? subject : undefined);
  }

  /**
   * The request settled: the caller's deadline stops pointing at the controller, which goes back to the pool unless
   * it was aborted (the SDK removed its listener when the request settled). Called once per request.
   */
  #release(controller: AbortController, unlink: () => void): void {
    unlink();
    if (!controller.signal.aborted && this.#spareControllers.length < MAX_SPARE_CONTROLLERS)
      this.#spareControllers.push(controller);
  }

  #requestLabel(method: string, subject: string | undefined): string {
    return `MCP ${subject === undefined ? method : `${method} ${subject}`} on server '${this.server.name}'`;
  }

  /**
   * The SDK's options for one request. Progress is asked for (a progress token in `_meta`) when the caller
   * listens to it, or when the call may outlive the per-request timeout: a server that reports progress then keeps
   * a long call alive past `timeout` (docs/design/transports.md#mcp-progress). A call whose own deadline ends
   * first has no use for it, and the token costs both sides work on every request.
   */
  #requestOptions(signal: AbortSignal, options: SessionCallOptions): RequestOptions {
    const timeout = this.server.timeoutMs;
    const onProgress = options.onProgress;
    const deadline = options.timeoutMs;
    if (onProgress === undefined && deadline !== undefined && deadline <= timeout) return { signal, timeout };
    return {
      signal,
      timeout,
      resetTimeoutOnProgress: true,
      onprogress: onProgress
        ? (p) => onProgress({ progress: p.progress, total: p.total, message: p.message })
        : ignoreProgress,
    };
  }

  #isConnectionFailure(conn: Connection): boolean {
    // A stdio write can fail (EPIPE) before the process's exit is seen: the request never reached the server.
    if (conn.closed || conn.stdio?.broken) return true;
    const http = conn.http;
    if (!http) return false;
    if (http.failure) return false; // the server broke a bound: no second try
    if (http.expired || http.broken) return true;
    if (http.unauthorized && this.#opts.auth?.auth_type === 'oauth2') {
      invalidateAuth(this.#opts.auth, this.#opts.ctx);
      return true;
    }
    return false;
  }

  /** `toolName`: the request was that tool's `tools/call`, so a JSON-RPC error answering it means the tool failed. */
  async #mapError(error: unknown, conn: Connection | undefined, what: string, toolName?: string): Promise<UtcpError> {
    if (error instanceof UtcpError) return error;
    const sdk = await this.#opts.loadSdk();
    if (error instanceof sdk.SdkError && error.code === sdk.SdkErrorCode.RequestTimeout) {
      return new UtcpTimeoutError(`MCP ${what} on server '${this.server.name}'`, this.server.timeoutMs, {
        cause: error,
      });
    }
    const http = httpFailureOf(error, sdk);
    if (http && http.status >= 400 && this.server.kind !== 'stdio') {
      return new McpServerError(
        this.server.name,
        `${this.#label} at ${redactUrl((this.server as HttpServer).url)} answered ${what} with ${describeHttpFailure(http)}`,
        '',
        { cause: error, status: http.status },
      );
    }
    if (conn?.closed || (error instanceof sdk.SdkError && error.code === sdk.SdkErrorCode.ConnectionClosed)) {
      const why = conn?.stdio?.endReason ?? conn?.http?.failure;
      // Let the process's last words arrive before quoting them.
      if (conn?.stdio) await conn.stdio.close();
      return new McpServerError(
        this.server.name,
        `${this.#label} closed the connection during ${what}${why ? ` (${why})` : ''}`,
        conn?.stderr() ?? '',
        { cause: error },
      );
    }
    if (error instanceof sdk.ProtocolError && toolName !== undefined) {
      // The server answered the call with a JSON-RPC error: the tool failed (docs/design/transports.md#mcp-errors).
      // The SDK prefixes the server's message with "MCP error <code>: ".
      const text = error.message.replace(/^MCP error -?\d+: /, '');
      return new ToolExecutionError(
        `MCP tool ${this.server.name}.${toolName} failed: ${bounded(text)} (JSON-RPC error ${error.code})`,
        { text, rpcCode: error.code, rpcData: error.data },
        { cause: error },
      );
    }
    if (error instanceof sdk.ProtocolError) {
      return new TransportError(
        `${this.#label} rejected ${what}: ${bounded(error.message)} (JSON-RPC error ${error.code})`,
        { code: 'PROTOCOL_ERROR', cause: error },
      );
    }
    return new McpServerError(
      this.server.name,
      `MCP ${what} on server '${this.server.name}' failed: ${bounded(messageOf(error))}`,
      conn?.stderr() ?? '',
      { cause: error },
    );
  }

  // ------------------------------------------------------------------ connections

  #connection(): Promise<Connection> {
    if (this.#closed)
      return Promise.reject(
        new UtcpError('CLIENT_CLOSED', `${this.#label}: the session of manual ${this.manualName} is closed`),
      );
    if (this.#current && !this.#current.closed) return Promise.resolve(this.#current);
    if (!this.#connecting) {
      const opening = this.#open().then(async (conn) => {
        if (this.#closed) {
          await this.#closeConnection(conn);
          throw new UtcpError('CLIENT_CLOSED', `${this.#label}: the session of manual ${this.manualName} is closed`);
        }
        this.#current = conn;
        return conn;
      });
      this.#connecting = opening;
      const clear = () => {
        if (this.#connecting === opening) this.#connecting = undefined;
      };
      opening.then(clear, clear);
    }
    return this.#connecting;
  }

  /** Forgets a failed connection and closes it in the background. */
  #drop(conn: Connection): void {
    if (this.#current === conn) this.#current = undefined;
    this.#toolNames = undefined;
    void this.#closeConnection(conn);
  }

  async #open(): Promise<Connection> {
    const sdk = await this.#opts.loadSdk();
    const server = this.server;
    if (server.kind === 'stdio') {
      if (this.#stdioEra === 'legacy') return this.#initialize(sdk, await this.#stdioTransport(sdk, server), 'legacy');
      try {
        return await this.#initialize(sdk, await this.#stdioTransport(sdk, server), 'auto');
      } catch (error) {
        // A server that exits on the version probe (some SDKs end on any request before `initialize`)
        // is a legacy server: start it again and open with the plain `initialize` handshake.
        if (this.#closing.signal.aborted || !(error instanceof McpServerError) || !error.exitedDuringProbe) throw error;
        this.#opts.ctx.logger.debug?.(
          `${this.#label}: the server exited on the protocol version probe; restarting it with the legacy handshake`,
        );
        this.#stdioEra = 'legacy';
        return this.#initialize(sdk, await this.#stdioTransport(sdk, server), 'legacy');
      }
    }
    if (server.kind !== 'http-auto') return this.#initHttp(sdk, server, server.kind);
    try {
      return await this.#initHttp(sdk, server, 'streamable-http');
    } catch (error) {
      const status = error instanceof McpServerError ? error.status : undefined;
      if (
        this.#closing.signal.aborted ||
        status === undefined ||
        status < 400 ||
        status >= 500 ||
        status === 401 ||
        status === 403
      )
        throw error;
      this.#opts.ctx.logger.debug?.(
        `${this.#label}: streamable HTTP failed with HTTP ${status}; trying the legacy SSE transport`,
      );
      try {
        return await this.#initHttp(sdk, server, 'sse');
      } catch (sseError) {
        if (this.#closing.signal.aborted || !(sseError instanceof UtcpError)) throw sseError;
        // Both failed: the streamable HTTP answer is usually the informative one (a modern server's refusal).
        throw new McpServerError(
          server.name,
          `${(error as Error).message}; the legacy SSE transport also failed: ${sseError.message.replace(/^.*could not be initialised: /, '')}`,
          '',
          {
            cause: error,
            status,
          },
        );
      }
    }
  }

  async #stdioTransport(sdk: McpSdk, server: StdioServer): Promise<ConnectionParts> {
    const env = buildChildEnv({
      hostEnv: process.env,
      envVars: server.env,
      platform: process.platform,
      what: 'mcp',
      fields: { inherit: 'inherit', envVars: 'env' },
    });
    if (process.platform === 'win32') {
      // The SDK's transport resolves `npx`-style `.cmd` shims on Windows (we cannot without a shell).
      const StdioClientTransport = await sdk.loadStdioClientTransport();
      const transport = new StdioClientTransport({
        command: server.command,
        args: server.args,
        env,
        cwd: server.cwd,
        stderr: 'pipe',
      });
      let tail = '';
      transport.stderr?.on('data', (chunk: Buffer | string) => {
        tail = (tail + String(chunk)).slice(-STDERR_TAIL_CHARS);
      });
      return { transport, kind: 'stdio', stderr: () => tail };
    }
    const stdio = new StdioProcessTransport(
      {
        command: server.command,
        args: server.args,
        env,
        cwd: server.cwd,
        maxMessageBytes: Math.max(this.#opts.ctx.limits.max_response_bytes, 1024 * 1024),
        pidNamespace: () => clientPidNamespace(this.#opts.ctx),
      },
      sdk,
    );
    return { transport: stdio, kind: 'stdio', stdio, stderr: () => stdio.stderrTail };
  }

  #httpTransport(sdk: McpSdk, server: HttpServer, kind: 'streamable-http' | 'sse'): ConnectionParts {
    const http = newHttpConnectionState();
    let transport: SdkTransport | undefined;
    // A message over the cap drops the connection at once, so calls waiting on it fail now (docs/design/transports.md#mcp-http-bounds).
    const fetch = createMcpFetch(this.#opts.ctx, this.#opts.auth, http, this.#closing.signal, {
      maxMessageBytes: Math.max(this.#opts.ctx.limits.max_response_bytes, 1024 * 1024),
      onViolation: () => void transport?.close().catch(() => undefined),
      remoteSource: this.#opts.remoteSource === true,
    });
    const requestInit = { headers: server.headers };
    transport =
      kind === 'sse'
        ? new sdk.SSEClientTransport(server.url, { requestInit, fetch })
        : new sdk.StreamableHTTPClientTransport(server.url, { requestInit, fetch });
    return { transport, kind, http, stderr: () => '' };
  }

  /**
   * Opens an HTTP connection with the version probe; a server that refuses the probe itself (HTTP 500 from servers
   * built on a popular template) is opened again with the plain `initialize` handshake, as the SDK clients do, and
   * the session remembers it (docs/design/transports.md#mcp-protocol-versions).
   */
  async #initHttp(sdk: McpSdk, server: HttpServer, kind: 'streamable-http' | 'sse'): Promise<Connection> {
    if (this.#httpEra === 'legacy') return this.#initialize(sdk, this.#httpTransport(sdk, server, kind), 'legacy');
    try {
      return await this.#initialize(sdk, this.#httpTransport(sdk, server, kind), 'auto');
    } catch (error) {
      if (this.#closing.signal.aborted || !(error instanceof McpServerError) || !error.probeRefused) throw error;
      this.#opts.ctx.logger.debug?.(
        `${this.#label}: the server refused the protocol version probe (HTTP ${error.status ?? '?'}); opening with the legacy handshake`,
      );
      this.#httpEra = 'legacy';
      return this.#initialize(sdk, this.#httpTransport(sdk, server, kind), 'legacy');
    }
  }

  /**
   * Opens the connection. `auto` negotiates the protocol version (docs/design/transports.md#mcp-protocol-versions):
   * a `server/discover` probe selects the 2026-07-28 era when the server offers it, and anything else
   * falls back to the `initialize` handshake of the 2024-11-05 … 2025-11-25 era.
   */
  async #initialize(sdk: McpSdk, parts: ConnectionParts, mode: 'auto' | 'legacy'): Promise<Connection> {
    let conn: Connection | undefined;
    const onChanged = () => {
      if (!conn || !conn.listed || conn.closed || this.#closed) return;
      this.#toolNames = undefined;
      this.#opts.onListChanged();
    };
    const client = new sdk.Client(CLIENT_INFO, {
      capabilities: {},
      versionNegotiation: { mode, probe: { timeoutMs: Math.min(this.#initTimeoutMs, PROBE_TIMEOUT_MS) } },
      listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged } },
    });
    conn = { ...parts, client, closed: false, listed: false, callToolResultSchema: sdk.callToolResultSchema };
    const live = conn;
    client.onclose = () => {
      live.closed = true;
    };
    client.onerror = (error) =>
      this.#opts.ctx.logger.debug?.(`${this.#label}: ${messageOf(error)}`, { manual: this.manualName });
    const link = linkSignal(this.#closing.signal);
    try {
      await client.connect(conn.transport, { timeout: this.#initTimeoutMs, signal: link.signal });
    } catch (error) {
      await this.#closeConnection(conn);
      if (this.#closing.signal.aborted) throw abortError(this.#closing.signal, `${this.#label} initialisation`);
      throw await this.#mapInitError(error, conn, sdk, mode);
    } finally {
      link.dispose();
    }
    if (conn.http) conn.http.ready = true;
    return conn;
  }

  async #mapInitError(error: unknown, conn: Connection, sdk: McpSdk, mode: 'auto' | 'legacy'): Promise<UtcpError> {
    if (error instanceof sdk.SdkError && error.code === sdk.SdkErrorCode.RequestTimeout) {
      return new UtcpTimeoutError(`${this.#label} initialisation`, this.#initTimeoutMs, { cause: error });
    }
    const server = this.server;
    if (server.kind === 'stdio') {
      const why = conn.stdio?.endReason;
      const what = `${this.#label} (command '${server.command}') failed to start`;
      const failure = new McpServerError(server.name, `${what}: ${why ?? bounded(messageOf(error))}`, conn.stderr(), {
        cause: error,
      });
      // Exited cleanly after it had started: the shape of a server that ends on the unknown probe request.
      if (mode === 'auto' && conn.stdio?.startedAndExited && conn.stdio.protocolFailure === undefined)
        failure.exitedDuringProbe = true;
      return failure;
    }
    const where = redactUrl(server.url);
    const http = httpFailureOf(error, sdk);
    if (http && http.status >= 400) {
      const failure = new McpServerError(
        server.name,
        `${this.#label} at ${where} could not be initialised: ${describeHttpFailure(http)}`,
        '',
        { cause: error, status: http.status },
      );
      // The version probe itself was refused (not the credentials): the plain handshake may still work.
      if (
        mode === 'auto' &&
        (error as { code?: unknown }).code === 'ERA_NEGOTIATION_FAILED' &&
        http.status !== 401 &&
        http.status !== 403
      )
        failure.probeRefused = true;
      return failure;
    }
    return new McpServerError(
      server.name,
      `${this.#label} at ${where} could not be initialised: ${conn.http?.failure ?? bounded(messageOf(error))}`,
      '',
      { cause: error },
    );
  }

  async #closeConnection(conn: Connection): Promise<void> {
    conn.closed = true;
    if (conn.kind === 'streamable-http' && conn.http?.ready && !conn.http.expired && conn.transport.sessionId) {
      // Tell the server the session is over (DELETE), without letting a slow server hold up close().
      await settleWithin(
        (conn.transport as unknown as { terminateSession(): Promise<void> }).terminateSession().catch(() => undefined),
        TERMINATE_SESSION_WAIT_MS,
      );
    }
    await conn.client.close().catch(() => undefined);
    // Client.close() closes the transport, but not when connect() never attached it.
    await conn.transport.close().catch(() => undefined);
  }
}

interface HttpFailure {
  status: number;
  /** The server's own words: the JSON-RPC error message of the body, else a short plain-text body. */
  message: string | undefined;
  rpcCode: number | undefined;
}

/** The HTTP status and the server's message of an SDK HTTP error (streamable HTTP or legacy SSE). */
function httpFailureOf(error: unknown, sdk: McpSdk): HttpFailure | undefined {
  if (error instanceof sdk.SdkHttpError) {
    const data = error.data as { status?: unknown; text?: unknown } | undefined;
    const status = typeof data?.status === 'number' ? data.status : undefined;
    if (status === undefined) return undefined;
    return { status, ...serverWords(typeof data?.text === 'string' ? data.text : '') };
  }
  if (error instanceof sdk.SseError && typeof error.code === 'number' && error.code >= 100) {
    return { status: error.code, message: undefined, rpcCode: undefined };
  }
  const legacy = /\(HTTP (\d{3})\)|Non-200 status code \((\d{3})\)/.exec(messageOf(error));
  if (legacy) return { status: Number(legacy[1] ?? legacy[2]), message: undefined, rpcCode: undefined };
  return undefined;
}

/** Reads a JSON-RPC error out of a response body; a short non-JSON body is quoted as it is. */
function serverWords(body: string): { message: string | undefined; rpcCode: number | undefined } {
  const text = body.trim();
  if (text === '') return { message: undefined, rpcCode: undefined };
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } } | null;
    const rpc = parsed && typeof parsed === 'object' ? parsed.error : undefined;
    if (rpc && typeof rpc.message === 'string')
      return { message: bounded(rpc.message, 300), rpcCode: typeof rpc.code === 'number' ? rpc.code : undefined };
  } catch {
    // not JSON
  }
  return {
    message: /^[\x20-\x7e\s]+$/.test(text) && text.length <= 300 ? text.replace(/\s+/g, ' ') : undefined,
    rpcCode: undefined,
  };
}

function describeHttpFailure(http: HttpFailure): string {
  const rpc = http.rpcCode !== undefined ? `, JSON-RPC error ${http.rpcCode}` : '';
  return `HTTP ${http.status}${http.message ? `: ${http.message}` : ''}${rpc ? ` (${rpc.slice(2)})` : ''}`;
}

/** The message, plus the system error code underneath (`fetch failed (ECONNREFUSED)`). */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let code: string | undefined;
  let inner: unknown = (error as { cause?: unknown }).cause;
  for (let depth = 0; depth < 4 && inner && code === undefined; depth++) {
    const candidate = (inner as { code?: unknown }).code;
    if (typeof candidate === 'string' && /^E[A-Z_]+$/.test(candidate)) code = candidate;
    inner = (inner as { cause?: unknown }).cause;
  }
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

function ignoreProgress(): void {}

function bounded(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** A signal that follows `parent` until `dispose()`, after which `parent` holds no reference to it. */
function linkSignal(parent: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const local = new AbortController();
  if (parent.aborted) {
    local.abort(parent.reason);
    return { signal: local.signal, dispose() {} };
  }
  const forward = () => local.abort(parent.reason);
  parent.addEventListener('abort', forward, { once: true });
  return { signal: local.signal, dispose: () => parent.removeEventListener('abort', forward) };
}
