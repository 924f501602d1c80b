import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TransportError } from '../index.js';
import { isLoopbackLiteral } from '../internal.js';
import { loadStreamableHttpServerTransport, type McpServerSdk } from './sdk.js';
import { createBridgeServer, type BridgeServerSettings } from './bridge-server.js';

type BridgeServer = ReturnType<typeof createBridgeServer>;
type HttpTransport = InstanceType<Awaited<ReturnType<typeof loadStreamableHttpServerTransport>>>;

interface Session {
  transport: HttpTransport;
  server: BridgeServer;
}

export interface HttpBridgeOptions {
  host: string;
  port: number;
  path: string;
}

export interface HttpBridge {
  url: string;
  /** Every live MCP session's server (for list-changed notifications). */
  servers(): BridgeServer[];
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

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Serves MCP over streamable HTTP on a node:http server: one SDK transport and one MCP server per
 * session (created by an `initialize` POST, ended by DELETE or `close()`).
 * When bound to a loopback address, requests must name a loopback Host (and Origin, when sent),
 * which keeps web pages from reaching the bridge through DNS rebinding.
 */
export async function startHttpBridge(
  sdk: McpServerSdk,
  settings: BridgeServerSettings,
  options: HttpBridgeOptions,
): Promise<HttpBridge> {
  const StreamableHTTPServerTransport = await loadStreamableHttpServerTransport();
  const sessions = new Map<string, Session>();
  const pending = new Set<Session>();
  const loopbackOnly = isLoopbackLiteral(options.host);
  let closed = false;

  async function closeSession(session: Session): Promise<void> {
    pending.delete(session);
    if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
    await session.server
      .close()
      .catch((error: Error) => settings.logger.debug('MCP bridge: closing a session failed', { error: error.message }));
  }

  async function openSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const session = {} as Session;
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        pending.delete(session);
        sessions.set(id, session);
      },
    });
    session.transport.onclose = () => {
      if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
    };
    session.server = createBridgeServer(sdk, settings);
    pending.add(session);
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res);
    // A first request that was not `initialize` was refused by the transport: drop its session.
    if (!session.transport.sessionId) await closeSession(session);
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
    if (closed) return sendJsonRpcError(res, 503, -32000, 'Server is closing');
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return sendJsonRpcError(res, 400, -32000, 'Bad Request: missing Mcp-Session-Id header');
    return openSession(req, res);
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

  return {
    url: `http://${urlHost(options.host)}:${port}${options.path}`,
    servers: () => [...sessions.values()].map((s) => s.server),
    async close() {
      if (closed) return;
      closed = true;
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all([...sessions.values(), ...pending].map(closeSession));
      // Idle keep-alive sockets would hold the process for the keep-alive timeout.
      http.closeAllConnections();
      await stopped;
    },
  };
}
