import { once } from 'node:events';
import { connect } from 'node:net';
import { TransportError, UtcpError } from '../../core/errors.js';
import { abortError, createDeadline, throwIfAborted, type Deadline, onAbort } from '../../core/deadline.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from '../../net/dial-guard.js';
import type { SocketTarget } from '../../net/socket-target.js';
import { ByteReader } from './byte-reader.js';

export interface TcpExchangeOptions {
  target: SocketTarget;
  /** The framed request bytes. */
  request: Buffer;
  /** End the write side after sending. */
  halfClose: boolean;
  signal: AbortSignal;
  /** Further scopes that cancel the exchange (the manual's, the transport's). */
  scopes?: readonly AbortSignal[];
  /** The tool comes from a remote-sourced manual: loopback addresses are refused (dial guard). */
  remoteSource?: boolean;
  /** Resolver. @default dns.lookup */
  lookup?: LookupFunction;
  /** Connect + whole read, in ms. */
  timeoutMs: number;
  /** The caller's own deadline, for messages. */
  callerTimeoutMs?: number;
  /** e.g. "TCP call demo.echo to 127.0.0.1:4000". */
  what: string;
}

/** An open request/response exchange on one fresh connection. */
export interface TcpExchange {
  reader: ByteReader;
  deadline: Deadline;
  /** Destroys the socket and clears the timer. Safe to call twice. */
  close(): void;
}

/**
 * Connects, sends the request and returns a reader for the response. The socket is destroyed
 * when the signal aborts, when the timeout passes and on `close()`.
 * @throws UtcpTimeoutError / UtcpAbortError, or TransportError when the connection fails.
 */
export async function openTcpExchange(options: TcpExchangeOptions): Promise<TcpExchange> {
  const { target, what } = options;
  throwIfAborted(options.signal, what, options.callerTimeoutMs);
  assertDialAllowed(target.host, options.remoteSource === true, what);
  const deadline = createDeadline([options.signal, ...(options.scopes ?? [])], options.timeoutMs, what);
  const lookup = guardedLookup({
    remote: options.remoteSource === true,
    lookup: options.lookup,
    closing: deadline.signal,
    what,
  });
  const socket = connect({ host: target.host, port: target.port, noDelay: true, lookup: lookup as never });
  socket.on('error', () => {}); // surfaced through the reader; this only keeps an error between reads from crashing the process
  const offAbort = onAbort(deadline.signal, () => socket.destroy());
  const close = () => {
    offAbort();
    deadline.dispose();
    socket.destroy();
  };
  try {
    await once(socket, 'connect', { signal: deadline.signal });
  } catch (cause) {
    close();
    if (deadline.signal.aborted) throw abortError(deadline.signal, what, options.callerTimeoutMs);
    if (cause instanceof UtcpError) throw cause;
    throw new TransportError(`${what}: cannot connect (${(cause as Error).message})`, { cause });
  }
  const reader = new ByteReader(socket, deadline.signal, what, options.callerTimeoutMs);
  if (options.halfClose) socket.end(options.request);
  else socket.write(options.request);
  return { reader, deadline, close };
}
