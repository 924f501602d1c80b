import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TransportError } from '../index.js';
import { isLoopbackLiteral } from '../internal.js';
import type { McpServerSdk } from './sdk.js';
import { createBridgeServer, type BridgeServerSettings } from './bridge-server.js';
import { bearerChecker, type BearerCheck } from './http-auth.js';
import { sendWebResponse, toWebRequest } from './web-http.js';

type BridgeServer = ReturnType<typeof createBridgeServer>;
type HttpTransport = InstanceType<McpServerSdk['WebStandardStreamableHTTPServerTransport']>;

interface Session {
  transport: HttpTransport;
  server: BridgeServer;
  /** Requests of this session still being answered; an open GET event stream or a running call counts. */
  active: number;
  /** performance.now() when its last request ended. */
  lastUsed: number;
  /** Closes the session when it has been idle (no request in flight) for the idle timeout. */
  idleTimer?: NodeJS.Timeout;
  ended: boolean;
}

export interface HttpBridgeOptions {
  host: string;
  port: number;
  path: string;
  /** The bearer token every request must carry; undefined accepts any request (`auth: 'none'`). */
  token: string | undefined;
  /** Live sessions at most (docs/design/threat-model.md#mcp-bridge-sessions). */
  maxSessions: number;
  /** A session with no request in flight for this long is closed. */
  sessionIdleTimeoutMs: number;
  /**
   * Keep nothing between requests: every request, of either protocol era, is answered by a fresh server
   * (docs/design/transports.md#mcp-bridge-stateless). `maxSessions` and `sessionIdleTimeoutMs` do not apply.
   */
  stateless: boolean;
}

export interface HttpBridge {
  url: string;
  /** Sends `notifications/tools/list_changed` to every live 2025-era session and every open 2026-07-28 subscription. */
  notifyToolListChanged(): Promise<void>;
  close(): Promise<void>;
}

/** How long an idle keep-alive connection stays open (Node's default is 5 s). */
const BRIDGE_IDLE_TIMEOUT_MS = 600_000;

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function originHostname(origin: string): string | undefined {
  try {
    return new URL(origin).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** 401 with the RFC 6750 challenge; the connection closes so an unauthenticated body is not read on. */
function sendUnauthorized(res: ServerResponse, check: Exclude<BearerCheck, 'ok'>): void {
  const challenge =
    check === 'invalid'
      ? 'Bearer realm="utcp-kit MCP bridge", error="invalid_token"'
      : 'Bearer realm="utcp-kit MCP bridge"';
  res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': challenge, connection: 'close' });
  const message =
    check === 'invalid'
      ? 'Unauthorized: the bearer token is wrong'
      : 'Unauthorized: send the bridge token as "Authorization: Bearer <token>"';
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Serves MCP over streamable HTTP on a node:http server (docs/design/transports.md#mcp-bridge-http). A 2026-07-28
 * request carries its protocol version and client in every message and is answered by a server made for it alone.
 * A 2025-era host gets one SDK transport and one MCP server per session (created by an `initialize` POST, ended by
 * DELETE or `close()`), or, with `stateless`, a fresh server per request as well.
 * When bound to a loopback address, requests must name a loopback Host (and Origin, when sent),
 * which keeps web pages from reaching the bridge through DNS rebinding. With a token, every request must carry it
 * (checked before any session is looked up or created); sessions are bounded in number and closed when idle
 * (docs/design/threat-model.md#mcp-bridge-auth).
 */
export async function startHttpBridge(
  sdk: McpServerSdk,
  settings: BridgeServerSettings,
  options: HttpBridgeOptions,
): Promise<HttpBridge> {
  const factory = () => createBridgeServer(sdk, settings);
  const onerror = (error: Error) => settings.logger.debug('MCP bridge: request rejected', { error: error.message });
  // 2026-07-28 requests always; 2025-era requests too in stateless mode, else they go to the sessions below.
  const perRequest = sdk.createMcpHandler(factory, { legacy: options.stateless ? 'stateless' : 'reject', onerror });
  const sessions = new Map<string, Session>();
  const pending = new Set<Session>();
  const loopbackOnly = isLoopbackLiteral(options.host);
  const checkBearer = options.token === undefined ? undefined : bearerChecker(options.token);
  let closed = false;

  /** Drops the session from the books and stops its timer (on close, DELETE or the transport closing). */
  function forget(session: Session): void {
    session.ended = true;
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    pending.delete(session);
    if (session.transport.sessionId && sessions.get(session.transport.sessionId) === session)
      sessions.delete(session.transport.sessionId);
  }

  async function closeSession(session: Session): Promise<void> {
    forget(session);
    await session.server
      .close()
      .catch((error: Error) => settings.logger.debug('MCP bridge: closing a session failed', { error: error.message }));
  }

  /** Counts a request as in flight until its response closes; the idle clock starts when none is left. */
  function track(session: Session, res: ServerResponse): void {
    session.active++;
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    res.once('close', () => {
      session.active--;
      session.lastUsed = performance.now();
      if (session.active > 0 || session.ended) return;
      session.idleTimer = setTimeout(() => {
        settings.logger.debug('MCP bridge: closing an idle session', { idleMs: options.sessionIdleTimeoutMs });
        void closeSession(session);
      }, options.sessionIdleTimeoutMs);
      session.idleTimer.unref();
    });
  }

  /**
   * Makes room for a new session: at the cap, the least recently used session without a request in flight is
   * closed (its host gets 404 and starts a new one, as MCP asks). False when every session is busy.
   */
  function makeRoom(): boolean {
    if (sessions.size + pending.size < options.maxSessions) return true;
    let oldest: Session | undefined;
    for (const s of sessions.values()) if (s.active === 0 && (!oldest || s.lastUsed < oldest.lastUsed)) oldest = s;
    if (!oldest) return false;
    settings.logger.debug('MCP bridge: session cap reached, closing the least recently used idle session', {
      maxSessions: options.maxSessions,
    });
    // forget() runs synchronously, so concurrent initialisations never count the same free slot twice.
    void closeSession(oldest);
    return true;
  }

  async function openSession(request: Request, res: ServerResponse): Promise<void> {
    if (!makeRoom())
      return sendJsonRpcError(
        res,
        503,
        -32000,
        `Too many MCP sessions: all ${options.maxSessions} are busy; retry later or end one with DELETE`,
      );
    const session = { active: 0, lastUsed: performance.now(), ended: false } as Session;
    session.transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        pending.delete(session);
        if (!session.ended) sessions.set(id, session);
      },
    });
    session.transport.onclose = () => forget(session);
    session.server = factory();
    pending.add(session);
    track(session, res);
    try {
      await session.server.connect(session.transport);
      await sendWebResponse(res, await session.transport.handleRequest(request));
    } finally {
      // A first request that was not `initialize` (or that failed) made no session: drop it and its slot.
      if (!session.transport.sessionId) await closeSession(session);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bridge.invalid');
    if (url.pathname !== options.path) return sendJsonRpcError(res, 404, -32000, 'Not found');
    if (loopbackOnly) {
      const host = hostnameOf(req.headers.host ?? '');
      const origin = req.headers.origin;
      if (!host || !isLoopbackLiteral(host)) return sendJsonRpcError(res, 403, -32000, 'Forbidden host');
      if (origin !== undefined && !isLoopbackLiteral(originHostname(origin) ?? ''))
        return sendJsonRpcError(res, 403, -32000, 'Forbidden origin');
    }
    if (checkBearer) {
      const check = checkBearer(req);
      if (check !== 'ok') return sendUnauthorized(res, check);
    }
    if (closed) return sendJsonRpcError(res, 503, -32000, 'Server is closing');
    const request = toWebRequest(req, res);
    if (options.stateless) return sendWebResponse(res, await perRequest.fetch(request));
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      track(session, res);
      return sendWebResponse(res, await session.transport.handleRequest(request));
    }
    if (req.method !== 'POST') return sendJsonRpcError(res, 400, -32000, 'Bad Request: missing Mcp-Session-Id header');
    // The SDK's own classification (it reads a clone of the body): a 2025-era message opens a session.
    if (await sdk.isLegacyRequest(request)) return openSession(request, res);
    return sendWebResponse(res, await perRequest.fetch(request));
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      settings.logger.warn('MCP bridge: request failed', { error: error.message });
      sendJsonRpcError(res, 500, -32603, 'Internal error');
    });
  });
  // A host may sit idle far longer than Node's 5 s: the SDK client compiles every outputSchema after tools/list
  // (GitHub's 1,223 tools: 15-25 s of blocked event loop). Its next POST then reuses a socket we closed meanwhile
  // and fails with "other side closed". Idle sockets stay open; close() ends them. docs/design/transports.md#mcp-bridge-idle
  http.keepAliveTimeout = BRIDGE_IDLE_TIMEOUT_MS;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(
        new TransportError(`MCP bridge: cannot listen on ${options.host}:${options.port}: ${error.message}`, {
          cause: error,
        }),
      );
    http.once('error', onError);
    http.listen(options.port, options.host, () => {
      http.off('error', onError);
      resolve();
    });
  });
  http.on('error', (error) => settings.logger.warn('MCP bridge: HTTP server error', { error: error.message }));
  const { port } = http.address() as AddressInfo;
  if (!checkBearer && !loopbackOnly)
    settings.logger.warn('MCP bridge: serving without authentication on a non-loopback address', {
      host: options.host,
    });

  return {
    url: `http://${urlHost(options.host)}:${port}${options.path}`,
    async notifyToolListChanged() {
      perRequest.notify.toolsChanged();
      await Promise.all(
        [...sessions.values()].map(({ server }) =>
          server
            .sendToolListChanged()
            .catch((error: Error) =>
              settings.logger.debug('MCP bridge: list_changed failed', { error: error.message }),
            ),
        ),
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all([...[...sessions.values(), ...pending].map(closeSession), perRequest.close()]);
      // Idle keep-alive sockets would hold the process for the keep-alive timeout.
      http.closeAllConnections();
      await stopped;
    },
  };
}
