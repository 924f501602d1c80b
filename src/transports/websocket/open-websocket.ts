import type { IncomingMessage } from 'node:http';
import type { WebSocket as WsSocket } from 'ws';
import { HttpStatusError, TransportError, UtcpError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { abortError, createDeadline, throwIfAborted, onAbort } from '../../core/deadline.js';
import { redactUrl } from '../../core/url-policy.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from '../../net/dial-guard.js';
import type { HandshakeRequest } from './handshake-request.js';
import type { WebSocketClass } from './load-ws.js';
import { WsConnection, wsError } from './ws-connection.js';

const noop = () => {};

/** How long a closing connection waits for the peer's close frame before the socket is destroyed. */
const CLOSE_TIMEOUT_MS = 1000;

export interface OpenWebSocketOptions {
  request: HandshakeRequest;
  protocol: string | undefined;
  /** Per-message cap (ws `maxPayload`), in bytes. */
  maxPayloadBytes: number;
  keepAlive: boolean;
  signal: AbortSignal;
  /** Handshake deadline, in ms. */
  timeoutMs: number;
  callerTimeoutMs?: number;
  what: string;
  logger: Logger;
  /** The tool comes from a remote-sourced manual: loopback addresses are refused (dial guard). */
  remoteSource?: boolean;
  /** Resolver. @default dns.lookup */
  lookup?: LookupFunction;
}

/**
 * Performs the upgrade and resolves with the open connection. Redirects are never followed:
 * a 3xx answer is an error, as is any other non-101 status (HttpStatusError).
 * @throws UtcpTimeoutError / UtcpAbortError, HttpStatusError, TransportError.
 */
export async function openWebSocket(WebSocket: WebSocketClass, options: OpenWebSocketOptions): Promise<WsConnection> {
  const { what } = options;
  throwIfAborted(options.signal, what, options.callerTimeoutMs);
  const deadline = createDeadline(options.signal, options.timeoutMs, `${what} (opening handshake)`);
  let ws: WsSocket;
  try {
    assertDialAllowed(new URL(options.request.url).hostname, options.remoteSource === true, what);
  } catch (error) {
    deadline.dispose();
    throw error;
  }
  try {
    // `closeTimeout` is missing from @types/ws; a variable skips the excess-property check.
    const wsOptions = {
      headers: options.request.headers,
      maxPayload: options.maxPayloadBytes,
      followRedirects: false,
      maxRedirects: 0,
      closeTimeout: CLOSE_TIMEOUT_MS,
      // Resolution through the dial guard; a pending lookup ends when the handshake is abandoned.
      lookup: guardedLookup({
        remote: options.remoteSource === true,
        lookup: options.lookup,
        closing: deadline.signal,
        what,
      }),
    };
    ws = new WebSocket(options.request.url, options.protocol, wsOptions);
  } catch (cause) {
    deadline.dispose();
    throw new UtcpError('INVALID_CONFIG', `${what}: invalid connection settings (${(cause as Error).message})`, {
      cause,
    });
  }
  ws.on('error', () => {}); // reported through the promise below and by WsConnection afterwards
  try {
    return await new Promise<WsConnection>((resolve, reject) => {
      const cleanup = () => {
        offAbort();
        ws.off('open', onOpen);
        ws.off('error', onError);
        ws.off('unexpected-response', onUnexpected);
        ws.off('close', onClose);
      };
      const fail = (error: Error) => {
        cleanup();
        ws.terminate();
        reject(error);
      };
      let offAbort = noop;
      const cancel = () => fail(abortError(deadline.signal, what, options.callerTimeoutMs));
      const onOpen = () => {
        cleanup();
        // Wrapped synchronously, so a close right after the handshake is never missed.
        resolve(new WsConnection(ws, { what, keepAlive: options.keepAlive, logger: options.logger }));
      };
      const onError = (error: Error) => fail(wsError(error, `${what}: cannot connect`));
      const onClose = () => fail(new TransportError(`${what}: connection closed during the opening handshake`));
      const onUnexpected = (_req: unknown, res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        res.resume();
        if (status >= 300 && status < 400) {
          fail(
            new TransportError(
              `${what}: the upgrade was redirected (HTTP ${status}); WebSocket redirects are not followed`,
              { code: 'PROTOCOL_ERROR' },
            ),
          );
        } else {
          fail(new HttpStatusError(status, redactUrl(options.request.url), '', res.statusMessage ?? ''));
        }
      };
      if (deadline.signal.aborted) return cancel();
      offAbort = onAbort(deadline.signal, cancel);
      ws.on('open', onOpen);
      ws.on('error', onError);
      ws.on('unexpected-response', onUnexpected);
      ws.on('close', onClose);
    });
  } finally {
    deadline.dispose();
  }
}
