import { abortError, onAbort } from '../../core/deadline.js';

const noop = () => {};

interface Waiter {
  exclusive: boolean;
  grant(): void;
}

/**
 * Orders calls on one pooled socket: exclusive holders (calls matched to "the next frame") run one
 * at a time; shared holders (request-id correlated calls) run together. First come, first served.
 */
export class CallGate {
  #exclusive = false;
  #shared = 0;
  readonly #queue: Waiter[] = [];

  /**
   * Waits for a turn and returns the release function (idempotent).
   * @throws the typed abort error when `signal` aborts while waiting.
   */
  acquire(exclusive: boolean, signal: AbortSignal, what: string, callerTimeoutMs?: number): Promise<() => void> {
    if (signal.aborted) return Promise.reject(abortError(signal, what, callerTimeoutMs));
    if (this.#queue.length === 0 && this.#canGrant(exclusive)) return Promise.resolve(this.#grant(exclusive));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        exclusive,
        grant: () => {
          offAbort();
          resolve(this.#grant(exclusive));
        },
      };
      let offAbort = noop;
      const cancel = () => {
        const i = this.#queue.indexOf(waiter);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(abortError(signal, what, callerTimeoutMs));
        this.#drain();
      };
      offAbort = onAbort(signal, cancel);
      this.#queue.push(waiter);
    });
  }

  #canGrant(exclusive: boolean): boolean {
    return exclusive ? !this.#exclusive && this.#shared === 0 : !this.#exclusive;
  }

  #grant(exclusive: boolean): () => void {
    if (exclusive) this.#exclusive = true;
    else this.#shared++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (exclusive) this.#exclusive = false;
      else this.#shared--;
      this.#drain();
    };
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#canGrant(this.#queue[0].exclusive)) {
      this.#queue.shift()!.grant();
    }
  }
}
