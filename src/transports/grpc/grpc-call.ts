import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import { UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { abortError, onAbort } from '../../core/deadline.js';
import { AsyncQueue } from '../shared/async-queue.js';
import { GrpcError } from './grpc-error.js';
import type { Grpc } from './load-grpc.js';

const noop = () => {};

export interface GrpcCallOptions {
  grpc: Grpc;
  client: Client;
  /** `/package.Service/Method` */
  path: string;
  /** The encoded request. */
  request: Buffer;
  metadata: Metadata;
  /** Whole-call deadline, in ms. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Largest single response message accepted, in bytes. */
  maxMessageBytes: number;
  /** For messages: "gRPC tool x.y". */
  what: string;
  /** The caller-imposed deadline (for timeout messages), when the signal carries one. */
  callerTimeoutMs?: number;
  /** Bound on the response bytes waiting unread in a stream (limits.max_response_bytes). @default maxMessageBytes */
  maxBufferedBytes?: number;
}

const identity = (b: Buffer) => b;

/** Maps a gRPC error to the typed error: our deadline → TIMEOUT, our abort → ABORTED, else GrpcError. */
function mapError(error: unknown, options: Omit<GrpcCallOptions, 'request'>, tooLarge: boolean): unknown {
  const { grpc, signal, what } = options;
  if (tooLarge) {
    return new UtcpError(
      'RESPONSE_TOO_LARGE',
      `${what}: a response message exceeds the ${options.maxMessageBytes}-byte limit`,
      { cause: error },
    );
  }
  if (signal.aborted) return abortError(signal, what, options.callerTimeoutMs);
  const e = error as Partial<ServiceError>;
  if (typeof e?.code !== 'number') return error;
  if (e.code === grpc.status.DEADLINE_EXCEEDED) return new UtcpTimeoutError(what, options.timeoutMs, { cause: error });
  const statusName = (grpc.status as unknown as Record<number, string>)[e.code] ?? 'UNKNOWN';
  return new GrpcError(what, e.code, statusName, e.details ?? '', { cause: error });
}

/** A response deserializer that enforces the per-message size limit. */
function limited(options: Omit<GrpcCallOptions, 'request'>, onTooLarge: () => void): (b: Buffer) => Buffer {
  return (buffer: Buffer) => {
    if (buffer.length > options.maxMessageBytes) {
      onTooLarge();
      throw new Error('response message too large');
    }
    return buffer;
  };
}

/** Runs one unary call and resolves with the raw response bytes. Aborting `signal` cancels the call. */
export function unaryCall(options: GrpcCallOptions): Promise<Buffer> {
  const { signal } = options;
  if (signal.aborted) return Promise.reject(abortError(signal, options.what, options.callerTimeoutMs));
  return new Promise((resolve, reject) => {
    let tooLarge = false;
    let offAbort = noop;
    const call = options.client.makeUnaryRequest(
      options.path,
      identity,
      limited(options, () => (tooLarge = true)),
      options.request,
      options.metadata,
      { deadline: Date.now() + options.timeoutMs },
      (error, response) => {
        offAbort();
        if (error) reject(mapError(error, options, tooLarge));
        else resolve(response as Buffer);
      },
    );
    offAbort = onAbort(signal, () => call.cancel());
  });
}

/** The part of a gRPC client call the response queue drives (grpc-js calls are object-mode readables). */
interface ResponseStream {
  on(event: string, listener: (arg: any) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  cancel(): void;
}

/**
 * Queues the responses of a streaming call in the shared queue (docs/design/transports.md#async-queue):
 * `data` pushes (the call is paused while responses wait unread), `end` ends, `error` fails. Aborting
 * `signal` cancels the call; returning early or overflowing the bound cancels it too.
 */
function queueResponses(call: ResponseStream, options: Omit<GrpcCallOptions, 'request'>) {
  const { signal } = options;
  let ended = false;
  const queue = new AsyncQueue<Buffer>({
    what: options.what,
    maxBufferedBytes: options.maxBufferedBytes ?? options.maxMessageBytes,
    sizeOf: (item) => item.length,
    flow: { pause: () => call.pause(), resume: () => call.resume() },
    signal,
    callerTimeoutMs: options.callerTimeoutMs,
    onStop: () => {
      if (!ended) call.cancel();
    },
  });
  call.on('data', (item: Buffer) => queue.push(item));
  call.on('error', (error: unknown) => {
    ended = true;
    queue.fail(error);
  });
  call.on('end', () => {
    ended = true;
    queue.end();
  });
  const offAbort = onAbort(signal, () => call.cancel());
  return {
    queue,
    get ended() {
      return ended;
    },
    release(): void {
      offAbort();
      void queue.return();
    },
  };
}

/**
 * Runs one server-streaming call and yields each raw response message as it arrives.
 * Returning early or aborting cancels the call; a non-OK status is thrown after the items before it.
 * A stream that ends without an OK status (the connection lost, no trailers) is a `GrpcError`, never a short result.
 */
export async function* serverStreamCall(options: GrpcCallOptions): AsyncGenerator<Buffer, void, undefined> {
  const { signal } = options;
  if (signal.aborted) throw abortError(signal, options.what, options.callerTimeoutMs);
  let tooLarge = false;
  const call = options.client.makeServerStreamRequest(
    options.path,
    identity,
    limited(options, () => (tooLarge = true)),
    options.request,
    options.metadata,
    { deadline: Date.now() + options.timeoutMs },
  );
  const stream = queueResponses(call, options);
  try {
    for (;;) {
      let result: IteratorResult<Buffer, undefined>;
      try {
        result = await stream.queue.take();
      } catch (error) {
        throw error instanceof UtcpError ? error : mapError(error, options, tooLarge);
      }
      if (result.done) return;
      yield result.value;
    }
  } finally {
    stream.release();
  }
}

/**
 * A bidirectional stream used as request/response pairs (server reflection): `ask` writes one
 * request and resolves with the next response. `end` half-closes; `cancel` aborts.
 */
export function bidiExchange(options: Omit<GrpcCallOptions, 'request'>) {
  let tooLarge = false;
  const call = options.client.makeBidiStreamRequest(
    options.path,
    identity,
    limited(options, () => (tooLarge = true)),
    options.metadata,
    {
      deadline: Date.now() + options.timeoutMs,
    },
  );
  const stream = queueResponses(call, options);
  return {
    async ask(request: Buffer): Promise<Buffer> {
      call.write(request);
      let result: IteratorResult<Buffer, undefined>;
      try {
        result = await stream.queue.take();
      } catch (error) {
        throw error instanceof UtcpError ? error : mapError(error, options, tooLarge);
      }
      if (result.done)
        throw new UtcpError('PROTOCOL_ERROR', `${options.what}: the server ended the stream without answering`);
      return result.value;
    },
    end(): void {
      const ended = stream.ended;
      stream.release();
      if (!ended) call.end();
      // The server may keep the stream open after we half-close; nothing more is read from it.
      if (!ended) call.cancel();
    },
  };
}
