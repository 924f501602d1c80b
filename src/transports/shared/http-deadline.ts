import { UtcpTimeoutError } from '../../core/errors.js';

/** A signal that aborts with the outer signal, on `cancel()`, or after `timeoutMs` with a `UtcpTimeoutError`. */
export interface Deadline {
  signal: AbortSignal;
  /** Aborts the work (e.g. the consumer stopped reading a stream). */
  cancel(reason?: unknown): void;
  /** Stops the timer; the outer signal and `cancel()` still apply. */
  clearTimer(): void;
}

/**
 * Links an outer signal with a local timer. The timer's abort reason is a `UtcpTimeoutError`
 * naming `what`, so `abortError(signal, …)` reports the template timeout rather than a generic abort.
 * `timeoutMs` ≤ 0 or undefined: no timer. Always call `clearTimer()` (or `cancel()`) when done.
 */
export function createDeadline(outer: AbortSignal, timeoutMs: number | undefined, what: string): Deadline {
  const local = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0) {
    timer = setTimeout(() => local.abort(new UtcpTimeoutError(what, timeoutMs)), timeoutMs);
    timer.unref?.();
  }
  const clearTimer = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  return {
    signal: AbortSignal.any([outer, local.signal]),
    cancel(reason?: unknown) {
      clearTimer();
      if (!local.signal.aborted) local.abort(reason);
    },
    clearTimer,
  };
}
