import type { Readable } from 'node:stream';
import { TransportError, UtcpError } from '../../core/errors.js';
import { abortError } from '../../core/deadline.js';

/**
 * Pull-based reading of a socket, chunk by chunk, with push-back of unconsumed bytes.
 * Aborting `signal` is expected to destroy the socket; reads then throw the typed abort error.
 */
export class ByteReader {
  readonly #iterator: AsyncIterator<Buffer>;
  readonly #pushedBack: Buffer[] = [];
  readonly #signal: AbortSignal;
  readonly #what: string;
  readonly #timeoutMs: number | undefined;
  #ended = false;

  constructor(stream: Readable, signal: AbortSignal, what: string, timeoutMs?: number) {
    this.#iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    this.#signal = signal;
    this.#what = what;
    this.#timeoutMs = timeoutMs;
  }

  /** The next chunk, or null at end of stream. @throws the abort/timeout error, or TransportError on a socket error. */
  async next(): Promise<Buffer | null> {
    const back = this.#pushedBack.shift();
    if (back) return back;
    if (this.#ended) return null;
    let result: IteratorResult<Buffer>;
    try {
      result = await this.#iterator.next();
    } catch (cause) {
      if (this.#signal.aborted) throw abortError(this.#signal, this.#what, this.#timeoutMs);
      if (cause instanceof UtcpError) throw cause;
      throw new TransportError(`${this.#what}: connection failed while reading (${(cause as Error).message})`, {
        cause,
      });
    }
    if (this.#signal.aborted) throw abortError(this.#signal, this.#what, this.#timeoutMs);
    if (result.done) {
      this.#ended = true;
      return null;
    }
    return result.value;
  }

  /** Returns bytes read too far, to be read again first. */
  unshift(bytes: Buffer): void {
    if (bytes.length > 0) this.#pushedBack.unshift(bytes);
  }
}
