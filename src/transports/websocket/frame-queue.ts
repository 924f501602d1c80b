import { abortError } from '../../core/deadline.js';
import type { RawFrame } from './decode-frame.js';
import type { CloseInfo, FrameSubscriber } from './ws-connection.js';

/** A queued frame, or the end of the connection. */
export type QueueItem = ({ kind: 'frame' } & RawFrame) | ({ kind: 'closed' } & CloseInfo);

/** Frames buffered before the socket is paused (when flow control is enabled). */
const HIGH_WATER_FRAMES = 64;

/**
 * Turns a connection's pushed frames into pulls for one call. With `flow`, the socket is paused
 * while too many frames wait, so a slow stream consumer does not buffer without bound.
 */
export class FrameQueue implements FrameSubscriber {
  readonly #items: QueueItem[] = [];
  readonly #flow: { pause(): void; resume(): void } | undefined;
  #waiter: ((item: QueueItem) => void) | undefined;
  #paused = false;

  constructor(flow?: { pause(): void; resume(): void }) {
    this.#flow = flow;
  }

  frame(frame: RawFrame): void {
    this.#push({ kind: 'frame', ...frame });
    if (this.#flow && !this.#paused && this.#items.length >= HIGH_WATER_FRAMES) {
      this.#paused = true;
      this.#flow.pause();
    }
  }

  closed(info: CloseInfo): void {
    this.#push({ kind: 'closed', ...info });
  }

  /** The next item. @throws the typed abort/timeout error when `signal` aborts first. */
  next(signal: AbortSignal, what: string, callerTimeoutMs?: number): Promise<QueueItem> {
    const item = this.#items.shift();
    if (item) {
      if (this.#paused && this.#items.length < HIGH_WATER_FRAMES / 2) this.#resume();
      return Promise.resolve(item);
    }
    if (signal.aborted) return Promise.reject(abortError(signal, what, callerTimeoutMs));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiter = undefined;
        reject(abortError(signal, what, callerTimeoutMs));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiter = (next) => {
        signal.removeEventListener('abort', onAbort);
        resolve(next);
      };
    });
  }

  /** Resumes a paused socket; call when the call ends. */
  dispose(): void {
    if (this.#paused) this.#resume();
  }

  #push(item: QueueItem): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter(item);
    } else {
      this.#items.push(item);
    }
  }

  #resume(): void {
    this.#paused = false;
    this.#flow?.resume();
  }
}
