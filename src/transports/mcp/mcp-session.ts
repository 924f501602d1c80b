import type { RequestOptions, Resource, Tool as McpTool } from '@modelcontextprotocol/client';
import { ToolExecutionError, TransportError, UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { type AbortSource, abortError, raceSignal, scopeController, onAbort } from '../../core/deadline.js';
import type { ProgressEvent, TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../../http/auth.js';
import type { McpSdk } from './load-mcp-sdk.js';
import type { McpToolResult } from './map-tool-result.js';
import { type Connection, ConnectionOpener, closeConnection } from './mcp-connection.js';
import { bounded, describeHttpFailure, httpFailureOf, messageWithCode } from './mcp-failure.js';
import { McpServerError } from './mcp-server-error.js';
import type { HttpServer, ResolvedServer } from './resolve-server-config.js';

/** Spare request signals kept per session for reuse (docs/design/transports.md#mcp-call-path). */
const MAX_SPARE_CONTROLLERS = 16;

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
  readonly #opener: ConnectionOpener;
  /** Request signals of finished requests, never aborted, that the SDK no longer listens to: reused by later requests. */
  readonly #spareControllers: AbortController[] = [];

  constructor(opts: McpSessionOptions) {
    this.#opts = opts;
    this.manualName = opts.manualName;
    this.server = opts.server;
    this.fingerprint = opts.fingerprint;
    this.#opener = new ConnectionOpener({
      manualName: opts.manualName,
      server: opts.server,
      auth: opts.auth,
      ctx: opts.ctx,
      remoteSource: opts.remoteSource,
      loadSdk: opts.loadSdk,
      closing: this.#closing.signal,
      onListChanged: () => {
        if (this.#closed) return;
        this.#toolNames = undefined;
        opts.onListChanged();
      },
    });
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
    const request = (conn: Connection, req: RequestOptions): Promise<McpToolResult> =>
      conn.direct
        ? conn.direct.callTool(name, args, options)
        : (conn.client.request(
            { method: 'tools/call', params: { name, arguments: args } },
            conn.callToolResultSchema,
            req,
          ) as Promise<McpToolResult>);
    // On a live stdio connection of the 2025 era the request skips the SDK (docs/design/transports.md#mcp-direct-calls):
    // no request signal to lend, one promise; a failure takes the same recovery as the SDK path.
    const conn = this.#live(options);
    const direct = conn?.direct;
    if (!direct) return this.#run('tools/call', name, options, request);
    return direct
      .callTool(name, args, options)
      .catch((error: unknown) => this.#recover(error, conn!, 0, 'tools/call', name, options, request));
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
      if (conn) await closeConnection(conn);
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
    const conn = this.#live(options);
    if (!conn) return this.#runFrom(0, method, subject, options, request);
    const controller = this.#spareControllers.pop() ?? new AbortController();
    const unlink = onAbort(options.scope, (reason) => controller.abort(reason));
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

  /** The open connection, when the caller is still live and the session not closed. */
  #live(options: SessionCallOptions): Connection | undefined {
    return !options.scope.aborted && !this.#closed && this.#current && !this.#current.closed
      ? this.#current
      : undefined;
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
    const unlink = onAbort(scope, (reason) => controller.abort(reason));
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
      `MCP ${what} on server '${this.server.name}' failed: ${bounded(messageWithCode(error))}`,
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
      const opening = this.#opener.open().then(async (conn) => {
        if (this.#closed) {
          await closeConnection(conn);
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
    void closeConnection(conn);
  }
}

function ignoreProgress(): void {}
