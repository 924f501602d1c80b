/**
 * The MCP bridge: serves a UtcpClient's tools as an MCP server (stdio or streamable HTTP),
 * so any MCP host can call UTCP tools. The MCP SDK is imported on first use.
 */
import type { Readable, Writable } from 'node:stream';
import { UtcpError, type Logger } from '../index.js';
import { completeLogger } from '../internal.js';
import { startHttpBridge, type HttpBridge } from './http-bridge.js';
import { loadMcpServerSdk, loadStdioServer } from './sdk.js';
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  positiveIntOption,
  resolveBridgeToken,
  type McpHttpAuth,
} from './http-auth.js';
import {
  createBridgeServer,
  type BridgeServerSettings,
  type McpBridgeClient,
  type McpToolFilter,
} from './bridge-server.js';

export type { McpBridgeClient, McpToolFilter } from './bridge-server.js';
export type { McpHttpAuth } from './http-auth.js';
export { encodeMcpToolName } from './mcp-tool-names.js';

/** Serve over the process's stdin/stdout (or the given streams), for hosts that spawn the bridge. */
export interface McpStdioTransportOptions {
  transport: 'stdio';
  /** @default process.stdin */
  stdin?: Readable;
  /** @default process.stdout */
  stdout?: Writable;
}

/** Serve MCP streamable HTTP on a local port. */
export interface McpHttpTransportOptions {
  transport: 'http';
  /** @default 0 (any free port; read the handle's `url`) */
  port?: number;
  /** Address to bind. Loopback binds also reject non-loopback Host and Origin headers. @default "127.0.0.1" */
  host?: string;
  /** @default "/mcp" */
  path?: string;
  /**
   * How hosts authenticate; every request must carry `Authorization: Bearer <token>`, checked in constant time.
   * Omitted: a token is generated (256 random bits, base64url) and exposed as the handle's `token`.
   * `{ token }`: your token (16 to 1,024 visible ASCII characters). `'none'`: no authentication, so any local
   * process or user can call the tools; only for a port something else guards.
   * @default a generated token
   */
  auth?: McpHttpAuth;
  /**
   * Live sessions at most. A new session past it closes the least recently used session that has no request in
   * flight (its host gets 404 and starts a new one); when every session is busy it is refused with 503.
   * @default 50
   */
  maxSessions?: number;
  /** A session with no request in flight (an open GET event stream counts as one) for this long is closed. @default 600_000 (10 minutes) */
  sessionIdleTimeoutMs?: number;
  /**
   * Keep nothing between requests: every request is answered by a fresh MCP server, so any number of bridges behind
   * a load balancer (sharing one catalog) serve one host. 2025-era hosts get no session (no `Mcp-Session-Id`, no GET
   * event stream); 2026-07-28 hosts lose nothing. Not with `maxSessions` or `sessionIdleTimeoutMs`.
   * @default false
   */
  stateless?: boolean;
}

export type McpBridgeTransportOptions = McpStdioTransportOptions | McpHttpTransportOptions;

export interface ServeMcpOptions {
  /** Which tools to serve: full UTCP names (`<manual>.<tool>`) or a predicate. @default every tool */
  filter?: McpToolFilter;
  /** Advertise `tools.listChanged`, so `notifyToolListChanged()` can tell hosts to re-list. @default false */
  listChanged?: boolean;
  /**
   * List a tool's `outputs` as MCP `outputSchema` when it is an object schema. Strict MCP clients then
   * validate every result against it; turn this off when the schemas are only approximate. @default true
   */
  outputSchemas?: boolean;
  /** Deadline per tool call, in milliseconds. @default the client's own */
  timeoutMs?: number;
  /** @default { name: "utcp-kit", version: "0.1.0" } */
  serverInfo?: { name: string; version: string };
  /** Sent to hosts at initialisation. */
  instructions?: string;
  /** Receives diagnostics. @default silent */
  logger?: Logger;
}

export interface McpBridgeHandle {
  /** The endpoint URL (http only). */
  readonly url?: string;
  /**
   * The bearer token hosts must send (http unless `auth: 'none'`): the generated one, or yours. A secret: it grants
   * every served tool. Not enumerable, so logging or serialising the handle does not print it.
   */
  readonly token?: string;
  /** Settles when the bridge has closed (after `close()`, or when a stdio host closes stdin). */
  readonly closed: Promise<void>;
  /**
   * Sends `notifications/tools/list_changed` to every connected host.
   * @throws UtcpError NOT_SUPPORTED unless the bridge was started with `listChanged: true`.
   */
  notifyToolListChanged(): Promise<void>;
  /** Stops serving, aborts running calls and frees sockets. Safe to call twice. Does not close the client. */
  close(): Promise<void>;
}

/**
 * Serves the client's tools (`tools/list`, `tools/call`) as an MCP server.
 * Tool names stay `<manual>.<tool>` when MCP accepts them, else they are encoded (see `encodeMcpToolName`).
 * @throws UtcpError DEPENDENCY_MISSING without the MCP SDK; TransportError when the port cannot be bound.
 */
export async function serveMcp(
  client: McpBridgeClient,
  transport: McpBridgeTransportOptions,
  options: ServeMcpOptions = {},
): Promise<McpBridgeHandle> {
  const sdk = await loadMcpServerSdk();
  const closing = new AbortController();
  const settings: BridgeServerSettings = {
    client,
    filter: options.filter,
    serverInfo: options.serverInfo ?? { name: 'utcp-kit', version: '0.1.0' },
    instructions: options.instructions,
    listChanged: options.listChanged ?? false,
    outputSchemas: options.outputSchemas ?? true,
    timeoutMs: options.timeoutMs,
    closing: closing.signal,
    // Every level present; structured fields reach the logger pino style `(fields, message)`, as the client does.
    logger: completeLogger(options.logger),
  };
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  let notifyListChanged: () => Promise<void> = async () => {};
  let shutdown: (() => Promise<void>) | undefined;
  let url: string | undefined;
  let token: string | undefined;
  let closing$: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing$ ??= (async () => {
      closing.abort(new UtcpError('ABORTED', 'The MCP bridge was closed'));
      try {
        await shutdown?.();
      } finally {
        resolveClosed();
      }
    })();
    return closing$;
  };

  if (transport.transport === 'stdio') {
    const { serveStdio, StdioServerTransport } = await loadStdioServer();
    const stdin = transport.stdin ?? process.stdin;
    const stdout = transport.stdout ?? process.stdout;
    // The SDK picks the era from the host's first message and pins one server for the connection; a `server/discover`
    // probe may make one more that it throws away (docs/design/transports.md#mcp-bridge-protocol-versions).
    const made: Array<ReturnType<typeof createBridgeServer>> = [];
    const onEnd = () => void close();
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    const served = serveStdio(
      () => {
        const server = createBridgeServer(sdk, settings);
        made.push(server);
        if (made.length > 2) made.shift();
        return server;
      },
      {
        transport: new StdioServerTransport(stdin, stdout),
        onerror: (error) => settings.logger.warn('MCP bridge: protocol error', { error: error.message }),
      },
    );
    notifyListChanged = async () => {
      // A discarded discover probe was never connected: its failure says nothing.
      await Promise.all(
        made.map((s) =>
          s
            .sendToolListChanged()
            .catch((error: Error) =>
              settings.logger.debug('MCP bridge: list_changed failed', { error: error.message }),
            ),
        ),
      );
    };
    shutdown = async () => {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      await served.close();
    };
  } else if (transport.transport === 'http') {
    const stateless = transport.stateless === true;
    if (stateless && (transport.maxSessions !== undefined || transport.sessionIdleTimeoutMs !== undefined))
      throw new UtcpError(
        'INVALID_CONFIG',
        'serveMcp: maxSessions and sessionIdleTimeoutMs bound sessions; a stateless bridge keeps none',
      );
    token = resolveBridgeToken(transport.auth);
    const http: HttpBridge = await startHttpBridge(sdk, settings, {
      host: transport.host ?? '127.0.0.1',
      port: transport.port ?? 0,
      path: transport.path ?? '/mcp',
      token,
      maxSessions: positiveIntOption(transport.maxSessions, 'maxSessions', DEFAULT_MAX_SESSIONS),
      sessionIdleTimeoutMs: positiveIntOption(
        transport.sessionIdleTimeoutMs,
        'sessionIdleTimeoutMs',
        DEFAULT_SESSION_IDLE_TIMEOUT_MS,
      ),
      stateless,
    });
    url = http.url;
    notifyListChanged = () => http.notifyToolListChanged();
    shutdown = () => http.close();
  } else {
    throw new UtcpError(
      'INVALID_CONFIG',
      `serveMcp: unknown transport "${(transport as { transport?: unknown }).transport}"; expected "stdio" or "http"`,
    );
  }

  if (closing.signal.aborted) await shutdown?.(); // stdin ended while we were connecting
  const handle: McpBridgeHandle = {
    url,
    closed,
    async notifyToolListChanged() {
      if (!settings.listChanged)
        throw new UtcpError(
          'NOT_SUPPORTED',
          'serveMcp: start the bridge with { listChanged: true } to send tools/list_changed',
        );
      await notifyListChanged();
    },
    close,
  };
  // Not enumerable: logging or serialising the handle must not show the secret.
  Object.defineProperty(handle, 'token', { value: token, enumerable: false });
  return handle;
}
