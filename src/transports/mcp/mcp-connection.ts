/**
 * Opening one MCP connection (docs/design/transports.md#mcp-sessions): starting the stdio server or reaching the
 * HTTP one, the protocol version negotiation with its fall-backs to the legacy handshake and to the legacy SSE
 * transport (docs/design/transports.md#mcp-protocol-versions), and closing a connection. The session
 * (mcp-session.ts) decides when to open, reuse, drop and retry.
 */
import type { Client, Transport as SdkTransport } from '@modelcontextprotocol/client';
import { UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { abortError, createDeadline, settledWithin } from '../../core/deadline.js';
import type { TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { redactUrl } from '../../core/url-policy.js';
import { buildChildEnv } from '../../process/child-env.js';
import { clientPidNamespace } from '../../process/pid-namespace.js';
import { createMcpFetch, newHttpConnectionState, type HttpConnectionState } from './create-mcp-fetch.js';
import type { McpSdk } from './load-mcp-sdk.js';
import { bounded, describeHttpFailure, httpFailureOf, messageWithCode } from './mcp-failure.js';
import { McpServerError } from './mcp-server-error.js';
import {
  DEFAULT_MCP_TIMEOUT_SECONDS,
  type HttpServer,
  type ResolvedServer,
  type StdioServer,
} from './resolve-server-config.js';
import { DirectCaller } from './stdio-direct-call.js';
import { STDERR_TAIL_CHARS, StdioProcessTransport } from './stdio-process-transport.js';

/** How long closing an HTTP session waits for the server to acknowledge its DELETE, in ms. */
const TERMINATE_SESSION_WAIT_MS = 1000;
/** Longest wait for the answer to the protocol version probe (a silent stdio server is a legacy one), in ms. */
const PROBE_TIMEOUT_MS = 10_000;
const CLIENT_INFO = { name: 'utcp-kit', version: '0.1.0' };

/** One live MCP connection (a child process or an HTTP session) and what is known about its health. */
export interface Connection {
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
  /**
   * Makes `tools/call` requests without the SDK's request layer: stdio connections of the 2025 era only
   * (docs/design/transports.md#mcp-direct-calls).
   */
  direct?: DirectCaller;
}

/** What a transport factory provides; `ConnectionOpener` adds the client and the state. */
type ConnectionParts = Omit<Connection, 'client' | 'closed' | 'listed' | 'callToolResultSchema'>;

/** What opening connections for one session needs to know. */
export interface ConnectionOpenerOptions {
  manualName: string;
  server: ResolvedServer;
  /** The manual's substituted auth (HTTP servers only). */
  auth: Auth | null | undefined;
  ctx: TransportContext;
  /** The session serves a tool of a remote-sourced manual: HTTP requests go through the dial guard. */
  remoteSource?: boolean;
  loadSdk: () => Promise<McpSdk>;
  /** Aborted when the session closes: stops an opening in progress. */
  closing: AbortSignal;
  /** The server said its tool list changed on a connection that had listed it. */
  onListChanged: () => void;
}

/**
 * Opens the connections of one session and remembers what it learnt about the server's era
 * (a legacy server is opened with the plain `initialize` handshake from then on).
 */
export class ConnectionOpener {
  readonly #opts: ConnectionOpenerOptions;
  /** Set once a stdio server turned out to end on the version probe: later starts skip the probe. */
  #stdioEra: 'legacy' | undefined;
  /** Set when an HTTP server refused the version probe: later connections skip it. */
  #httpEra: 'legacy' | undefined;

  constructor(opts: ConnectionOpenerOptions) {
    this.#opts = opts;
  }

  /**
   * The handshake includes starting the process (or reaching the HTTP server), which can take far
   * longer than a request (`npx` installs), so it gets at least the default timeout.
   */
  get #initTimeoutMs(): number {
    return Math.max(this.#opts.server.timeoutMs, DEFAULT_MCP_TIMEOUT_SECONDS * 1000);
  }

  get #label(): string {
    return `MCP server '${this.#opts.server.name}'`;
  }

  async open(): Promise<Connection> {
    const sdk = await this.#opts.loadSdk();
    const server = this.#opts.server;
    if (server.kind === 'stdio') {
      if (this.#stdioEra === 'legacy') return this.#initialize(sdk, await this.#stdioTransport(sdk, server), 'legacy');
      try {
        return await this.#initialize(sdk, await this.#stdioTransport(sdk, server), 'auto');
      } catch (error) {
        // A server that exits on the version probe (some SDKs end on any request before `initialize`)
        // is a legacy server: start it again and open with the plain `initialize` handshake.
        if (this.#opts.closing.aborted || !(error instanceof McpServerError) || !error.exitedDuringProbe) throw error;
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
        this.#opts.closing.aborted ||
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
        if (this.#opts.closing.aborted || !(sseError instanceof UtcpError)) throw sseError;
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
    const fetch = createMcpFetch(this.#opts.ctx, this.#opts.auth, http, this.#opts.closing, {
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
      if (this.#opts.closing.aborted || !(error instanceof McpServerError) || !error.probeRefused) throw error;
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
      if (!conn || !conn.listed || conn.closed) return;
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
      this.#opts.ctx.logger.debug?.(`${this.#label}: ${messageWithCode(error)}`, { manual: this.#opts.manualName });
    // Follows `closing` until disposed, so the long-lived closing signal keeps no listener per connection.
    const link = createDeadline(this.#opts.closing, undefined, `${this.#label} initialisation`);
    try {
      await client.connect(conn.transport, { timeout: this.#initTimeoutMs, signal: link.signal });
    } catch (error) {
      await closeConnection(conn);
      if (this.#opts.closing.aborted) throw abortError(this.#opts.closing, `${this.#label} initialisation`);
      throw await this.#mapInitError(error, conn, sdk, mode);
    } finally {
      link.dispose();
    }
    if (conn.http) conn.http.ready = true;
    // The 2026 era wraps every request in a metadata envelope and may answer `input_required`: the SDK keeps those.
    if (conn.stdio && client.getProtocolEra() === 'legacy')
      conn.direct = new DirectCaller(conn.stdio, sdk, this.#opts.server.timeoutMs);
    return conn;
  }

  async #mapInitError(error: unknown, conn: Connection, sdk: McpSdk, mode: 'auto' | 'legacy'): Promise<UtcpError> {
    if (error instanceof sdk.SdkError && error.code === sdk.SdkErrorCode.RequestTimeout) {
      return new UtcpTimeoutError(`${this.#label} initialisation`, this.#initTimeoutMs, { cause: error });
    }
    const server = this.#opts.server;
    if (server.kind === 'stdio') {
      const why = conn.stdio?.endReason;
      const what = `${this.#label} (command '${server.command}') failed to start`;
      const failure = new McpServerError(
        server.name,
        `${what}: ${why ?? bounded(messageWithCode(error))}`,
        conn.stderr(),
        {
          cause: error,
        },
      );
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
      `${this.#label} at ${where} could not be initialised: ${conn.http?.failure ?? bounded(messageWithCode(error))}`,
      '',
      { cause: error },
    );
  }
}

/** Closes a connection; an HTTP session is ended with a DELETE first, waited for at most a second. */
export async function closeConnection(conn: Connection): Promise<void> {
  conn.closed = true;
  if (conn.kind === 'streamable-http' && conn.http?.ready && !conn.http.expired && conn.transport.sessionId) {
    // Tell the server the session is over (DELETE), without letting a slow server hold up close().
    await settledWithin(
      (conn.transport as unknown as { terminateSession(): Promise<void> }).terminateSession().catch(() => undefined),
      TERMINATE_SESSION_WAIT_MS,
    );
  }
  await conn.client.close().catch(() => undefined);
  // Client.close() closes the transport, but not when connect() never attached it.
  await conn.transport.close().catch(() => undefined);
}
