import { UtcpAbortError, UtcpError, UtcpTimeoutError } from './errors.js';

/**
 * Combines an optional caller signal with an optional deadline into one signal.
 * A deadline's abort reason is a DOMException named "TimeoutError".
 */
export function withDeadline(signal: AbortSignal | undefined, timeoutMs: number | undefined): AbortSignal {
  const parts: AbortSignal[] = [];
  if (signal) parts.push(signal);
  if (timeoutMs !== undefined && timeoutMs !== null && Number.isFinite(timeoutMs) && timeoutMs > 0) {
    parts.push(AbortSignal.timeout(timeoutMs));
  }
  if (parts.length === 0) return new AbortController().signal;
  if (parts.length === 1) return parts[0];
  return AbortSignal.any(parts);
}

export function isTimeoutReason(reason: unknown): boolean {
  return reason instanceof UtcpTimeoutError || (typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'TimeoutError');
}

/**
 * Turns an aborted signal's reason into the typed error to throw:
 * a deadline → `UtcpTimeoutError`, anything else → `UtcpAbortError` (the reason kept as cause).
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
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
