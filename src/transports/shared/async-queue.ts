/**
 * The one push → pull queue of the transports (docs/design/transports.md#async-queue): a producer that is
 * called back (socket events, a gRPC call's `data`) pushes items, one consumer pulls them with `take()` or
 * `for await`. Used by the websocket transport, GraphQL WebSocket subscriptions and gRPC streams.
 *
 * Node's `events.on` was not enough: it yields listener argument arrays of one emitter only, has no
 * bound on what waits unread, and rejects with a plain `AbortError` instead of the call's typed error.
 */
import { UtcpLimitError } from '../../core/errors.js';
import { abortError, onAbort } from '../../core/deadline.js';

const noop = () => {};

/** Pause and resume of the producer (a socket, a readable stream), for backpressure. */
export interface QueueFlow {
  pause(): void;
  resume(): void;
}

export interface AsyncQueueOptions<T> {
  /** Names the call in errors, e.g. "WebSocket call demo.echo to ws://127.0.0.1:4000/". */
  what: string;
  /** Bound on the bytes waiting unread (`sizeOf` of each item, at least 64 bytes each); the client's `limits.max_response_bytes`. */
  maxBufferedBytes: number;
  /** The size of one item in bytes. @default 0 (only the per-item minimum counts) */
  sizeOf?: (item: T) => number;
  /** Paused while `highWaterItems` items (or half the byte bound) wait unread, resumed below half of that. */
  flow?: QueueFlow;
  /** @default 64 */
  highWaterItems?: number;
  /** Aborting it ends pending and later pulls of the async iterator with the typed abort/timeout error. */
  signal?: AbortSignal;
  /** The caller's own deadline, for timeout messages. */
  callerTimeoutMs?: number;
  /** Called once when the consumer stops early (`return()`) or the bound is exceeded: stop producing. */
  onStop?: () => void;
}

/** Bytes counted for every item whatever its size (an object's own cost). */
const ITEM_OVERHEAD_BYTES = 64;

type Waiter<T> = {
  resolve(result: IteratorResult<T, undefined>): void;
  reject(error: unknown): void;
};

/**
 * A single-consumer async queue. `push` delivers or buffers an item; `end()` ends the stream after the
 * buffered items; `fail(error)` ends it with `error` after the buffered items. When more than
 * `maxBufferedBytes` wait unread (and more than one item: one item alone is bounded where it is read), the
 * buffer is dropped, the producer is told to stop and the next pull throws `UtcpLimitError`
 * (`max_response_bytes`). `return()` (a `break` out of `for await`) drops the buffer and stops the producer.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  readonly #options: AsyncQueueOptions<T>;
  readonly #highWaterItems: number;
  readonly #items: T[] = [];
  #head = 0;
  #bufferedBytes = 0;
  readonly #sizes: number[] = [];
  readonly #waiters: Waiter<T>[] = [];
  /** 'open' → 'ended' | 'failed' (after the buffer drains) → 'done'. */
  #state: 'open' | 'ended' | 'failed' | 'done' = 'open';
  #error: unknown;
  #paused = false;
  #stopped = false;

  constructor(options: AsyncQueueOptions<T>) {
    this.#options = options;
    this.#highWaterItems = Math.max(1, options.highWaterItems ?? 64);
  }

  /** Items waiting unread. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** True once `end`, `fail`, `return` or an overflow closed the producer side. */
  get closed(): boolean {
    return this.#state !== 'open';
  }

  /** Delivers `item` to a waiting pull, or buffers it. Returns false (and drops it) once the queue is closed. */
  push(item: T): boolean {
    if (this.#state !== 'open') return false;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.resolve({ done: false, value: item });
      return true;
    }
    const bytes = Math.max(ITEM_OVERHEAD_BYTES, this.#options.sizeOf?.(item) ?? 0);
    this.#items.push(item);
    this.#sizes.push(bytes);
    this.#bufferedBytes += bytes;
    const max = this.#options.maxBufferedBytes;
    if (this.#bufferedBytes > max && this.size > 1) {
      this.#clear();
      this.#state = 'failed';
      this.#error = new UtcpLimitError(
        'max_response_bytes',
        `${this.#options.what}: more than ${max} bytes of stream data wait unread (limits.max_response_bytes); read the stream faster or raise the limit`,
      );
      this.#stop();
      return false;
    }
    if (this.#options.flow && !this.#paused && (this.size >= this.#highWaterItems || this.#bufferedBytes >= max / 2)) {
      this.#paused = true;
      this.#options.flow.pause();
    }
    return true;
  }

  /** Ends the stream: buffered items are still delivered, then iteration is done. */
  end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    this.#settleWaiters();
  }

  /** Ends the stream with `error`, thrown by the pull after the buffered items. The first end wins. */
  fail(error: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#error = error;
    this.#settleWaiters();
  }

  /**
   * The next item; `{ done: true }` after `end()`. Rejects with the `fail()` error, the overflow error,
   * or, once `signal` (default: the queue's signal) has aborted, the typed abort/timeout error (buffered
   * items are not handed out after an abort).
   */
  take(signal: AbortSignal | undefined = this.#options.signal, callerTimeoutMs = this.#options.callerTimeoutMs) {
    const what = this.#options.what;
    if (signal?.aborted && this.#state !== 'done') return Promise.reject(abortError(signal, what, callerTimeoutMs));
    if (this.size > 0) return Promise.resolve<IteratorResult<T, undefined>>({ done: false, value: this.#shift() });
    if (this.#state === 'failed') {
      this.#state = 'done';
      const error = this.#error;
      this.#error = undefined;
      return Promise.reject(error);
    }
    if (this.#state !== 'open') {
      this.#state = 'done';
      return Promise.resolve<IteratorResult<T, undefined>>({ done: true, value: undefined });
    }
    return new Promise<IteratorResult<T, undefined>>((resolve, reject) => {
      let offAbort = noop;
      const cancel = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(abortError(signal as AbortSignal, what, callerTimeoutMs));
      };
      const waiter: Waiter<T> = {
        resolve: (result) => {
          offAbort();
          resolve(result);
        },
        reject: (error) => {
          offAbort();
          reject(error);
        },
      };
      if (signal) offAbort = onAbort(signal, cancel);
      this.#waiters.push(waiter);
    });
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return this.take();
  }

  /** The consumer stops: the buffer is dropped, pending pulls end, the producer is told to stop (once). */
  return(): Promise<IteratorResult<T, undefined>> {
    this.#clear();
    this.#state = 'done';
    this.#error = undefined;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve({ done: true, value: undefined });
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #shift(): T {
    const item = this.#items[this.#head] as T;
    this.#bufferedBytes -= this.#sizes[this.#head] as number;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#sizes.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items.splice(0, this.#head);
      this.#sizes.splice(0, this.#head);
      this.#head = 0;
    }
    if (
      this.#paused &&
      this.size < this.#highWaterItems / 2 &&
      this.#bufferedBytes < this.#options.maxBufferedBytes / 4
    ) {
      this.#paused = false;
      this.#options.flow?.resume();
    }
    return item;
  }

  /** Wakes every pending pull with the end or the failure (only reached with an empty buffer). */
  #settleWaiters(): void {
    const waiters = this.#waiters.splice(0);
    if (waiters.length === 0) return;
    if (this.#state === 'failed') {
      const error = this.#error;
      this.#state = 'done';
      this.#error = undefined;
      for (const waiter of waiters) waiter.reject(error);
    } else {
      this.#state = 'done';
      for (const waiter of waiters) waiter.resolve({ done: true, value: undefined });
    }
  }

  #clear(): void {
    this.#items.length = 0;
    this.#sizes.length = 0;
    this.#head = 0;
    this.#bufferedBytes = 0;
    if (this.#paused) {
      this.#paused = false;
      this.#options.flow?.resume();
    }
  }

  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#options.onStop?.();
  }
}
