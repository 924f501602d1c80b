import type { WebSocket as WsWebSocket, RawData } from 'ws';
import type { LookupFunction } from '../../net/dial-guard.js';
import { TransportError, UtcpError } from '../../core/errors.js';
import { redactUrl } from '../../core/url-policy.js';
import { AsyncQueue } from '../shared/async-queue.js';
import type { GraphqlBody, GraphqlResponse } from './post-graphql.js';

const TRANSPORT_WS = 'graphql-transport-ws';
const LEGACY_WS = 'graphql-ws';
const OP_ID = '1';

export interface SubscribeOptions {
  WebSocket: typeof WsWebSocket;
  url: URL;
  headers: Record<string, string>;
  body: GraphqlBody;
  /** Ends the whole subscription. */
  signal: AbortSignal;
  /** Bounds the handshake (open, connection_ack); the stream itself runs until `signal` or `complete`. */
  setupSignal: AbortSignal;
  maxMessageBytes: number;
  /** Bound on the bytes of messages waiting unread (limits.max_response_bytes); the socket is paused well before. */
  maxBufferedBytes: number;
  /** For messages. */
  what: string;
  /** Called once the operation is subscribed (the handshake deadline can stop). */
  onReady?: () => void;
  /** Name resolution for the socket: the dial guard's lookup (docs/design/threat-model.md#dial-guard). */
  lookup?: LookupFunction;
  /** Called with each socket so the transport can terminate it on close(). */
  track(socket: WsWebSocket): () => void;
}

type Event =
  | { kind: 'open' }
  | { kind: 'message'; data: RawData }
  | { kind: 'close'; code: number; reason: string }
  | { kind: 'error'; error: Error };

/**
 * Runs one GraphQL subscription over WebSocket (docs/design/transports.md#graphql), offering `graphql-transport-ws`
 * and the legacy `graphql-ws` protocol, and yields each execution result (`{data, errors}`) as it arrives.
 * Returning early (break) or aborting sends `complete` (or `stop` + `connection_terminate`) and closes the socket.
 * @throws TransportError on handshake/protocol failures, the typed abort/timeout error on abort.
 */
export async function* subscribeGraphql(options: SubscribeOptions): AsyncGenerator<GraphqlResponse, void, undefined> {
  const { url, what } = options;
  const shown = redactUrl(url);
  const socket = new options.WebSocket(url, [TRANSPORT_WS, LEGACY_WS], {
    headers: options.headers,
    maxPayload: options.maxMessageBytes,
    followRedirects: false,
    perMessageDeflate: false,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const untrack = options.track(socket);
  const events = new AsyncQueue<Event>({
    what,
    maxBufferedBytes: options.maxBufferedBytes,
    sizeOf: (event) => (event.kind === 'message' ? rawLength(event.data) : 0),
    flow: { pause: () => socket.pause(), resume: () => socket.resume() },
  });
  const push = (event: Event) => void events.push(event);
  socket.on('open', () => push({ kind: 'open' }));
  socket.on('message', (data) => push({ kind: 'message', data }));
  socket.on('close', (code, reason) => push({ kind: 'close', code, reason: reason.toString('utf8').slice(0, 200) }));
  socket.on('error', (error) => push({ kind: 'error', error }));
  socket.on('unexpected-response', (request, response) => {
    push({
      kind: 'error',
      error: new TransportError(`${what}: ${shown} refused the WebSocket upgrade (HTTP ${response.statusCode})`),
    });
    response.resume();
    request.destroy();
  });

  const next = async (signal: AbortSignal): Promise<Event> => {
    const result = await events.take(signal);
    // Unreachable: the queue is only ended in `finally` below.
    if (result.done) throw new TransportError(`${what}: the subscription ended`);
    return result.value;
  };
  const send = (message: object) => socket.send(JSON.stringify(message));
  let protocol = TRANSPORT_WS;
  let subscribed = false;
  let finished = false;

  const fail = (event: Event): never => {
    if (event.kind === 'error') {
      const tooLarge = (event.error as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
      if (event.error instanceof UtcpError) throw event.error;
      throw new TransportError(
        tooLarge
          ? `${what}: a message from ${shown} exceeds the ${options.maxMessageBytes}-byte limit`
          : `${what}: WebSocket ${shown} failed: ${event.error.message}`,
        { code: tooLarge ? 'RESPONSE_TOO_LARGE' : 'TRANSPORT_FAILED', cause: event.error },
      );
    }
    if (event.kind === 'close') {
      throw new TransportError(
        `${what}: ${shown} closed the subscription (code ${event.code}${event.reason ? `: ${event.reason}` : ''})`,
      );
    }
    throw new TransportError(`${what}: unexpected WebSocket event from ${shown}`, { code: 'PROTOCOL_ERROR' });
  };
  const parse = (data: RawData): { type?: unknown; id?: unknown; payload?: unknown } => {
    try {
      const value = JSON.parse(data.toString());
      if (typeof value === 'object' && value !== null) return value;
    } catch (cause) {
      throw new TransportError(`${what}: ${shown} sent a message that is not JSON`, { code: 'PROTOCOL_ERROR', cause });
    }
    throw new TransportError(`${what}: ${shown} sent a message that is not a JSON object`, { code: 'PROTOCOL_ERROR' });
  };

  try {
    // Handshake: open, connection_init, connection_ack.
    const opened = await next(options.setupSignal);
    if (opened.kind !== 'open') fail(opened);
    if (socket.protocol === LEGACY_WS) protocol = LEGACY_WS;
    send({ type: 'connection_init', payload: {} });
    for (;;) {
      const event = await next(options.setupSignal);
      if (event.kind !== 'message') fail(event);
      const msg = parse((event as { data: RawData }).data);
      if (msg.type === 'connection_ack') break;
      if (msg.type === 'ping') send({ type: 'pong' });
      else if (msg.type === 'connection_error') {
        throw new TransportError(`${what}: ${shown} rejected the connection`, {
          code: 'PROTOCOL_ERROR',
          cause: msg.payload,
        });
      }
    }
    send({ id: OP_ID, type: protocol === LEGACY_WS ? 'start' : 'subscribe', payload: options.body });
    subscribed = true;
    options.onReady?.();

    for (;;) {
      const event = await next(options.signal);
      if (event.kind !== 'message') fail(event);
      const msg = parse((event as { data: RawData }).data);
      if (msg.type === 'ping') {
        send({ type: 'pong' });
        continue;
      }
      if (msg.id !== undefined && msg.id !== OP_ID) continue;
      if (msg.type === 'next' || msg.type === 'data') {
        yield (msg.payload ?? {}) as GraphqlResponse;
      } else if (msg.type === 'error') {
        finished = true;
        yield { errors: Array.isArray(msg.payload) ? msg.payload : [msg.payload] };
        return;
      } else if (msg.type === 'complete') {
        finished = true;
        return;
      }
      // ka, pong and unknown types are ignored.
    }
  } finally {
    void events.return();
    untrack();
    closeSocket(socket, subscribed && !finished ? protocol : undefined);
  }
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** Stops the operation if it is still running, then closes; a server that never answers the close is cut off. */
function closeSocket(socket: WsWebSocket, stopWith: string | undefined): void {
  socket.removeAllListeners('message');
  socket.on('error', () => {});
  if (socket.readyState === socket.OPEN) {
    try {
      if (stopWith === LEGACY_WS) {
        socket.send(JSON.stringify({ id: OP_ID, type: 'stop' }));
        socket.send(JSON.stringify({ type: 'connection_terminate' }));
      } else if (stopWith === TRANSPORT_WS) {
        socket.send(JSON.stringify({ id: OP_ID, type: 'complete' }));
      }
    } catch {
      // The socket is going away anyway.
    }
    socket.close(1000);
    const timer = setTimeout(() => socket.terminate(), 2000);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  } else if (socket.readyState === socket.CONNECTING) {
    socket.terminate();
  }
}
