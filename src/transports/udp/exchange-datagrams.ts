import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIP } from 'node:net';
import { TransportError, UtcpError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { abortError, createDeadline, throwIfAborted, onAbort } from '../../core/deadline.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from '../../net/dial-guard.js';
import type { SocketTarget } from '../../net/socket-target.js';

const noop = () => {};

/** Largest UDP payload over IPv4 (65,535 − 8-byte UDP header − 20-byte IP header). */
export const MAX_UDP_PAYLOAD_BYTES = 65_507;
/** How long to wait for each reply datagram after the first. */
export const NEXT_DATAGRAM_WAIT_MS = 1000;

export interface DatagramExchangeOptions {
  target: SocketTarget;
  payload: Buffer;
  /** Reply datagrams to collect; 0 sends and returns at once. */
  responseCount: number;
  signal: AbortSignal;
  /** Further scopes that cancel the exchange (the manual's, the transport's). */
  scopes?: readonly AbortSignal[];
  /** The tool comes from a remote-sourced manual: loopback addresses are refused (dial guard). */
  remoteSource?: boolean;
  /** Resolver. @default dns.lookup */
  lookup?: LookupFunction;
  /** Wait for the first reply, in ms. */
  timeoutMs: number;
  callerTimeoutMs?: number;
  /** Cap on the total reply bytes. */
  maxBytes: number;
  what: string;
  logger: Logger;
}

/** The address datagrams are sent to (and accepted from) and the socket family it needs, dial guard applied. */
function resolveTarget(
  host: string,
  options: DatagramExchangeOptions,
  signal: AbortSignal,
): Promise<{ address: string; family: 4 | 6 }> {
  const { what } = options;
  assertDialAllowed(host, options.remoteSource === true, what);
  const literal = isIP(host);
  if (literal) return Promise.resolve({ address: host.toLowerCase(), family: literal as 4 | 6 });
  // The guarded lookup answers at once when `signal` aborts (a resolver that never answers cannot hold the call).
  const lookup = guardedLookup({
    remote: options.remoteSource === true,
    lookup: options.lookup,
    closing: signal,
    what,
  });
  return new Promise((resolve, reject) => {
    lookup(host, {}, (error, address, family) => {
      if (signal.aborted) return reject(abortError(signal, what, options.callerTimeoutMs));
      if (error) {
        if (error instanceof UtcpError) return reject(error);
        return reject(new TransportError(`${what}: cannot resolve the host (${error.message})`, { cause: error }));
      }
      resolve({ address: String(address).toLowerCase(), family: family === 6 ? 6 : 4 });
    });
  });
}

/**
 * Sends one datagram and collects up to `responseCount` replies from the target address:
 * the first within `timeoutMs`, each later one within 1000 ms (a miss ends collection).
 * Datagrams from any other address are ignored. The socket is closed on every path.
 * @throws UtcpTimeoutError when no reply arrives in time, UtcpAbortError on abort,
 *   TransportError on socket errors, oversized requests (INVALID_ARGUMENTS) or replies (RESPONSE_TOO_LARGE).
 */
export async function exchangeDatagrams(options: DatagramExchangeOptions): Promise<Buffer[]> {
  const { target, payload, what } = options;
  if (payload.length > MAX_UDP_PAYLOAD_BYTES) {
    throw new TransportError(
      `${what}: request of ${payload.length} bytes exceeds the ${MAX_UDP_PAYLOAD_BYTES}-byte UDP limit`,
      { code: 'INVALID_ARGUMENTS' },
    );
  }
  throwIfAborted(options.signal, what, options.callerTimeoutMs);
  const deadline = createDeadline([options.signal, ...(options.scopes ?? [])], options.timeoutMs, what);
  let resolved: { address: string; family: 4 | 6 };
  try {
    resolved = await resolveTarget(target.host, options, deadline.signal);
  } catch (error) {
    deadline.dispose();
    throw error;
  }
  const { address, family } = resolved;
  const socket = createSocket({ type: family === 6 ? 'udp6' : 'udp4' });
  let gapTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const cleanup = () => {
    deadline.dispose();
    if (gapTimer) clearTimeout(gapTimer);
    if (!closed) {
      closed = true;
      socket.close();
    }
  };
  try {
    return await new Promise<Buffer[]>((resolve, reject) => {
      const replies: Buffer[] = [];
      let total = 0;
      let offAbort = noop;
      const cancel = () => reject(abortError(deadline.signal, what, options.callerTimeoutMs));
      if (deadline.signal.aborted) return cancel();
      offAbort = onAbort(deadline.signal, cancel);
      const finish = (error?: Error) => {
        offAbort();
        if (error) reject(error);
        else resolve(replies);
      };
      socket.on('error', (cause) => finish(new TransportError(`${what}: socket error (${cause.message})`, { cause })));
      socket.on('message', (message: Buffer, from: RemoteInfo) => {
        if (from.address.toLowerCase() !== address) {
          options.logger.debug?.('udp: ignored a datagram from another address', { from: from.address });
          return;
        }
        total += message.length;
        if (total > options.maxBytes) {
          finish(
            new TransportError(`${what}: response exceeds the ${options.maxBytes}-byte limit`, {
              code: 'RESPONSE_TOO_LARGE',
            }),
          );
          return;
        }
        replies.push(message);
        if (replies.length >= options.responseCount) return finish();
        // After the first reply the template timeout no longer applies; each later datagram gets its own wait.
        deadline.clearTimer();
        if (gapTimer) clearTimeout(gapTimer);
        gapTimer = setTimeout(() => finish(), NEXT_DATAGRAM_WAIT_MS);
        gapTimer.unref?.();
      });
      socket.send(payload, target.port, address, (cause) => {
        if (cause) finish(new TransportError(`${what}: cannot send (${cause.message})`, { cause }));
        else if (options.responseCount <= 0) finish();
      });
    });
  } finally {
    cleanup();
  }
}
