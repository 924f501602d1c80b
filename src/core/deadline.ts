/**
 * The one deadline helper (docs/design/http-exchange.md#deadlines): links a caller's AbortSignal (and any other
 * scope, e.g. "the client is closing") with a timer, and maps an aborted signal to the typed error
 * to throw. Every transport, the client and the HTTP exchange use it.
 *
 * Signals are linked by hand (one controller, one listener per parent, removed on `dispose()`)
 * rather than with `AbortSignal.any`, which is slow on Node 20 and runs on every call.
 */
import { UtcpAbortError, UtcpError, UtcpTimeoutError } from './errors.js';

type MaybeSignal = AbortSignal | null | undefined;

/** Deadlines whose signal other code may arm extra timers on (the client's per-call scope). */
const armable = new WeakMap<AbortSignal, Deadline>();

function validMs(ms: number | null | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0;
}

/**
 * A signal that aborts when any parent aborts (with the parent's reason), on `abort()`, or after
 * `timeoutMs` with a `UtcpTimeoutError` naming `what`. Call `dispose()` when the work is over:
 * it stops the timers and unlinks from the parents, so long-lived parents keep no listener.
 */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #parents: AbortSignal[] = [];
  readonly #what: string;
  readonly #timeoutMs: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #extra: Set<NodeJS.Timeout> | undefined;
  #timedOut = false;
  #onParent: (() => void) | undefined;

  constructor(parents: MaybeSignal | readonly MaybeSignal[], timeoutMs: number | null | undefined, what: string) {
    this.#what = what;
    this.#timeoutMs = validMs(timeoutMs) ? timeoutMs : undefined;
    const list = Array.isArray(parents) ? parents : [parents];
    for (const parent of list as MaybeSignal[]) {
      if (!parent) continue;
      if (parent.aborted) {
        this.#controller.abort(parent.reason);
        break;
      }
      this.#parents.push(parent);
    }
    if (this.#controller.signal.aborted) {
      this.#parents.length = 0;
      return;
    }
    if (this.#parents.length > 0) {
      const onParent = (this.#onParent = () => {
        const fired = this.#parents.find((p) => p.aborted);
        this.abort(fired?.reason);
      });
      for (const parent of this.#parents) parent.addEventListener('abort', onParent, { once: true });
    }
    if (this.#timeoutMs !== undefined) this.#arm();
  }

  /** Aborts with a parent, on `abort()`, or when a timer fires. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The main timer's duration, when there is one. */
  get timeoutMs(): number | undefined {
    return this.#timeoutMs;
  }

  /** True once this deadline's own timer (not a parent, not `abort()`) fired. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  #arm(): void {
    const ms = this.#timeoutMs!;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timedOut = true;
      this.abort(new UtcpTimeoutError(this.#what, ms));
    }, ms);
  }

  /** Restarts the main timer (idle timeouts). No-op without a timer or once aborted. */
  reset(): void {
    if (this.#timer === undefined || this.signal.aborted) return;
    clearTimeout(this.#timer);
    this.#arm();
  }

  /**
   * Arms one more timer on this same signal: after `ms` it aborts with a `UtcpTimeoutError` naming `what`.
   * Returns the disarm function. Cheaper than a second linked deadline.
   */
  arm(ms: number | undefined, what: string): () => void {
    if (!validMs(ms) || this.signal.aborted) return noop;
    const timer = setTimeout(() => {
      this.#extra?.delete(timer);
      this.#timedOut = true;
      this.abort(new UtcpTimeoutError(what, ms));
    }, ms);
    (this.#extra ??= new Set()).add(timer);
    return () => {
      clearTimeout(timer);
      this.#extra?.delete(timer);
    };
  }

  /** Stops the timers; parents and `abort()` still apply. */
  clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#extra) {
      for (const t of this.#extra) clearTimeout(t);
      this.#extra.clear();
    }
  }

  /** Stops the timers and unlinks from the parents. Safe to call twice. */
  dispose(): void {
    this.clearTimer();
    if (this.#onParent) {
      for (const parent of this.#parents) parent.removeEventListener('abort', this.#onParent);
      this.#onParent = undefined;
    }
    this.#parents.length = 0;
    armable.delete(this.signal);
  }

  /** Disposes and aborts the work (e.g. the consumer stopped reading a stream). */
  abort(reason?: unknown): void {
    this.dispose();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  /** The typed error for this deadline's abort: `UtcpTimeoutError` for a deadline, else `UtcpAbortError`. */
  error(what = this.#what, timeoutMs = this.#timeoutMs): UtcpError {
    return abortError(this.signal, what, timeoutMs);
  }
}

const noop = () => {};

/**
 * Creates a deadline over `parents` with an optional timer (`timeoutMs` ≤ 0 or absent: none).
 * With `armable: true`, `withTimeout()` on its signal arms timers on it instead of linking a new one:
 * use it only for a signal that scopes exactly one operation (the client's per-call signal).
 */
export function createDeadline(
  parents: MaybeSignal | readonly MaybeSignal[],
  timeoutMs: number | null | undefined,
  what: string,
  options: { armable?: boolean } = {},
): Deadline {
  const deadline = new Deadline(parents, timeoutMs, what);
  if (options.armable && !deadline.signal.aborted) armable.set(deadline.signal, deadline);
  return deadline;
}

/** What `withTimeout` returns: the signal to pass on, and `dispose()` for when the work is over. */
export interface TimeoutScope {
  readonly signal: AbortSignal;
  /** Stops the timer; the signal keeps following its parents until `dispose()`. */
  clearTimer(): void;
  dispose(): void;
}

/**
 * A transport's own timeout on top of the signal it received. When `signal` is the client's
 * per-call signal the timer is armed on it directly (no second controller on the hot path);
 * otherwise a linked `Deadline` is created.
 */
export function withTimeout(signal: AbortSignal, timeoutMs: number | null | undefined, what: string): TimeoutScope {
  const owner = armable.get(signal);
  if (owner) {
    const disarm = owner.arm(timeoutMs ?? undefined, what);
    return { signal, clearTimer: disarm, dispose: disarm };
  }
  return new Deadline(signal, timeoutMs, what);
}

/** True when `signal` is a per-operation scope created with `armable: true` (it is never shared). */
export function isOperationSignal(signal: AbortSignal | undefined): boolean {
  return signal !== undefined && armable.has(signal);
}

export function isTimeoutReason(reason: unknown): boolean {
  return (
    reason instanceof UtcpTimeoutError ||
    (typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'TimeoutError')
  );
}

/**
 * THE abort → error mapping: an aborted signal's reason becomes the typed error to throw.
 * A `UtcpError` reason (a deadline's `UtcpTimeoutError`, `CLIENT_CLOSED`) is passed through; a
 * platform timeout becomes `UtcpTimeoutError`; anything else `UtcpAbortError` (the reason kept as cause).
 */
export function abortError(signal: AbortSignal, what: string, timeoutMs?: number): UtcpError {
  const reason = signal.reason;
  if (reason instanceof UtcpError) return reason;
  if (isTimeoutReason(reason)) return new UtcpTimeoutError(what, timeoutMs, { cause: reason });
  return new UtcpAbortError(what, { cause: reason });
}

/** Throws the typed abort/timeout error if the signal is already aborted. */
export function throwIfAborted(signal: AbortSignal, what: string, timeoutMs?: number): void {
  if (signal.aborted) throw abortError(signal, what, timeoutMs);
}

/**
 * Maps an error caught while `signal` was in force: once the signal aborted, the typed abort/timeout
 * error wins over whatever the aborted operation threw; otherwise the error is returned unchanged.
 */
export function settleError(error: unknown, signal: AbortSignal, what: string, timeoutMs?: number): unknown {
  if (
    signal.aborted &&
    !(
      error instanceof UtcpError &&
      (error.code === 'TIMEOUT' || error.code === 'ABORTED' || error.code === 'CLIENT_CLOSED')
    )
  ) {
    return abortError(signal, what, timeoutMs);
  }
  return error;
}

/**
 * Rejects with the typed abort error as soon as `signal` aborts; otherwise settles like `promise`.
 * Removes its listener either way.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal, what: string, timeoutMs?: number): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortError(signal, what, timeoutMs));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(abortError(signal, what, timeoutMs));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
