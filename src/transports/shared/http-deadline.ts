import { UtcpTimeoutError } from '../../core/errors.js';

/** A signal that aborts with the outer signal, on `cancel()`, or after `timeoutMs` with a `UtcpTimeoutError`. */
export interface Deadline {
  signal: AbortSignal;
  /** Aborts the work (e.g. the consumer stopped reading a stream). */
  cancel(reason?: unknown): void;
  /** Stops the timer; the outer signal and `cancel()` still apply. */
  clearTimer(): void;
  /** Stops the timer and unlinks from the outer signal: call it when the work is over. */
  dispose(): void;
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
  // Linked by hand rather than with AbortSignal.any, which is slow on Node 20 and runs on every call.
  const onOuter = () => local.abort(outer.reason);
  if (outer.aborted) local.abort(outer.reason);
  else outer.addEventListener('abort', onOuter, { once: true });
  const clearTimer = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const dispose = () => {
    clearTimer();
    outer.removeEventListener('abort', onOuter);
  };
  return {
    signal: local.signal,
    cancel(reason?: unknown) {
      dispose();
      if (!local.signal.aborted) local.abort(reason);
    },
    clearTimer,
    dispose,
  };
}
