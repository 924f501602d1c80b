import type { RawData, WebSocket as WsSocket } from 'ws';
import { TransportError, UtcpError, type UtcpErrorCode } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { RawFrame } from './decode-frame.js';

/** Keep-alive ping interval on pooled connections. */
export const KEEP_ALIVE_INTERVAL_MS = 30_000;

/** How the connection ended: the close code and, when it failed, the typed error. */
export interface CloseInfo {
  code: number;
  error?: UtcpError;
}

/** Receives the frames of one connection. */
export interface FrameSubscriber {
  frame(frame: RawFrame): void;
  closed(info: CloseInfo): void;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Maps a `ws` error to a typed error: oversized message, malformed frame, or network failure. */
export function wsError(error: Error & { code?: string }, what: string): UtcpError {
  if (error instanceof UtcpError) return error;
  let code: UtcpErrorCode = 'TRANSPORT_FAILED';
  if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') code = 'RESPONSE_TOO_LARGE';
  else if (typeof error.code === 'string' && error.code.startsWith('WS_ERR_')) code = 'PROTOCOL_ERROR';
  const reason = code === 'RESPONSE_TOO_LARGE' ? 'a message exceeds the size limit' : error.message;
  return new TransportError(`${what}: ${reason}`, { code, cause: error });
}

/**
 * One open WebSocket: fans frames out to subscribers, reports how it closed, and (optionally)
 * pings every 30 s, terminating a peer that stopped answering. Timers are unref'd and cleared on close.
 */
export class WsConnection {
  readonly #ws: WsSocket;
  readonly #what: string;
  readonly #subscribers = new Set<FrameSubscriber>();
  readonly #closeListeners = new Set<() => void>();
  readonly #closedPromise: Promise<void>;
  #lastError: UtcpError | undefined;
  #closeInfo: CloseInfo | undefined;
  #pingTimer: NodeJS.Timeout | undefined;
  #awaitingPong = false;

  constructor(ws: WsSocket, options: { what: string; keepAlive: boolean; logger: Logger }) {
    this.#ws = ws;
    this.#what = options.what;
    ws.on('message', (data, isBinary) => {
      const frame = { data: toBuffer(data), isBinary };
      for (const s of [...this.#subscribers]) s.frame(frame);
    });
    ws.on('error', (error) => {
      this.#lastError ??= wsError(error, this.#what);
      options.logger.debug?.('websocket: connection error', { code: this.#lastError.code });
    });
    this.#closedPromise = new Promise((resolve) => {
      ws.once('close', (code: number) => {
        options.logger.debug?.('websocket: connection closed', { code });
        this.#stopKeepAlive();
        this.#closeInfo = { code, error: this.#lastError };
        for (const s of [...this.#subscribers]) s.closed(this.#closeInfo);
        this.#subscribers.clear();
        for (const l of [...this.#closeListeners]) l();
        resolve();
      });
    });
    if (options.keepAlive) {
      ws.on('pong', () => {
        this.#awaitingPong = false;
      });
      this.#pingTimer = setInterval(() => {
        if (this.#awaitingPong) {
          options.logger.debug?.('websocket: no pong since the last ping, dropping the connection');
          this.#lastError ??= new TransportError(`${this.#what}: the server stopped answering pings`);
          ws.terminate();
          return;
        }
        this.#awaitingPong = true;
        ws.ping();
      }, KEEP_ALIVE_INTERVAL_MS);
      this.#pingTimer.unref?.();
    }
  }

  /** True until the connection starts closing. */
  get isOpen(): boolean {
    return this.#closeInfo === undefined && this.#ws.readyState === this.#ws.OPEN;
  }

  /** Sends one text frame. @throws TransportError when the connection is closed or the write fails. */
  send(text: string): Promise<void> {
    if (!this.isOpen) return Promise.reject(this.#closedError('before the message was sent'));
    return new Promise((resolve, reject) => {
      this.#ws.send(text, (error) => (error ? reject(wsError(error, this.#what)) : resolve()));
    });
  }

  /** Adds a subscriber; a closed connection reports `closed` at once. Returns the unsubscribe function. */
  subscribe(subscriber: FrameSubscriber): () => void {
    if (this.#closeInfo) {
      subscriber.closed(this.#closeInfo);
      return () => {};
    }
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Runs `listener` once the connection has closed. */
  onClose(listener: () => void): void {
    if (this.#closeInfo) listener();
    else this.#closeListeners.add(listener);
  }

  /** Stops reading from the socket (flow control for a slow consumer). */
  pause(): void {
    if (this.isOpen) this.#ws.pause();
  }

  resume(): void {
    if (this.isOpen) this.#ws.resume();
  }

  /** Closes with a normal close frame; resolves once closed (the peer gets `closeTimeout` to answer). Safe to call twice. */
  close(): Promise<void> {
    this.#stopKeepAlive();
    if (this.#ws.readyState === this.#ws.CONNECTING || this.#ws.readyState === this.#ws.OPEN) this.#ws.close(1000);
    return this.#closedPromise;
  }

  /** Destroys the socket at once. */
  terminate(): void {
    this.#stopKeepAlive();
    this.#ws.terminate();
  }

  #closedError(when: string): UtcpError {
    return this.#lastError ?? new TransportError(`${this.#what}: connection closed ${when}`);
  }

  #stopKeepAlive(): void {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = undefined;
  }
}
