import { UtcpTimeoutError } from '../../core/errors.js';

/** A caller signal combined with a transport's own template timeout. */
export interface SocketDeadline {
  /** Aborts on the caller's signal or when the timeout passes (reason: `UtcpTimeoutError`). */
  readonly signal: AbortSignal;
  /** True once the template timeout (not the caller) fired. */
  readonly timedOut: boolean;
  /** Restarts the timer (idle timeouts). No-op after it fired. */
  reset(): void;
  /** Clears the timer. Safe to call twice. */
  clear(): void;
}

/**
 * Combines `parent` with a timer of `timeoutMs`; when the timer fires the signal aborts with
 * `new UtcpTimeoutError(what, timeoutMs)`, which `abortError()` passes through unchanged.
 * The timer is unref'd so it never keeps the process alive.
 */
export function socketDeadline(parent: AbortSignal, timeoutMs: number, what: string): SocketDeadline {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new UtcpTimeoutError(what, timeoutMs));
    }, timeoutMs);
    timer.unref?.();
  };
  arm();
  const signal = AbortSignal.any([parent, controller.signal]);
  return {
    signal,
    get timedOut() {
      return timedOut;
    },
    reset() {
      if (timer === undefined || controller.signal.aborted) return;
      clearTimeout(timer);
      arm();
    },
    clear() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** A positive finite number, else the default. */
export function positiveOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
