import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import { UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { abortError } from '../../core/deadline.js';
import { GrpcError } from './grpc-error.js';
import type { Grpc } from './load-grpc.js';

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
    const call = options.client.makeUnaryRequest(
      options.path,
      identity,
      limited(options, () => (tooLarge = true)),
      options.request,
      options.metadata,
      { deadline: Date.now() + options.timeoutMs },
      (error, response) => {
        signal.removeEventListener('abort', onAbort);
        if (error) reject(mapError(error, options, tooLarge));
        else resolve(response as Buffer);
      },
    );
    const onAbort = () => call.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one server-streaming call and yields each raw response message as it arrives.
 * Returning early or aborting cancels the call; a non-OK status is thrown after the items before it.
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
  const stream = bufferResponses(call, signal);
  let finished = false;
  try {
    for (;;) {
      if (signal.aborted) throw abortError(signal, options.what, options.callerTimeoutMs);
      if (stream.items.length > 0) {
        yield stream.items.shift() as Buffer;
        continue;
      }
      if (stream.ended) {
        if (stream.failure !== undefined) throw mapError(stream.failure, options, tooLarge);
        finished = true;
        return;
      }
      await stream.changed();
    }
  } finally {
    stream.release();
    if (!finished && !stream.ended) call.cancel();
  }
}

/**
 * Buffers the responses of a streaming call and wakes the one waiter on every change
 * (a message, the end, an error, or an abort, which also cancels the call).
 */
function bufferResponses(
  call: { on(event: string, listener: (arg: any) => void): unknown; cancel(): void },
  signal: AbortSignal,
) {
  const stream = {
    items: [] as Buffer[],
    failure: undefined as unknown,
    ended: false,
    changed: () => new Promise<void>((resolve) => (wake = resolve)),
    release: () => signal.removeEventListener('abort', onAbort),
  };
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  call.on('data', (item: Buffer) => {
    stream.items.push(item);
    notify();
  });
  call.on('error', (error: unknown) => {
    stream.failure ??= error;
    stream.ended = true;
    notify();
  });
  call.on('end', () => {
    stream.ended = true;
    notify();
  });
  const onAbort = () => {
    call.cancel();
    notify();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return stream;
}

/**
 * A bidirectional stream used as request/response pairs (server reflection): `ask` writes one
 * request and resolves with the next response. `end` half-closes; `cancel` aborts.
 */
export function bidiExchange(options: Omit<GrpcCallOptions, 'request'>) {
  const { signal } = options;
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
  const stream = bufferResponses(call, signal);
  return {
    async ask(request: Buffer): Promise<Buffer> {
      call.write(request);
      for (;;) {
        if (stream.items.length > 0) return stream.items.shift() as Buffer;
        if (signal.aborted) throw abortError(signal, options.what, options.callerTimeoutMs);
        if (stream.failure !== undefined) throw mapError(stream.failure, options, tooLarge);
        if (stream.ended)
          throw new UtcpError('PROTOCOL_ERROR', `${options.what}: the server ended the stream without answering`);
        await stream.changed();
      }
    },
    end(): void {
      stream.release();
      if (!stream.ended) call.end();
      // The server may keep the stream open after we half-close; nothing more is read from it.
      if (!stream.ended) call.cancel();
    },
  };
}
