import { raceSignal, UtcpAbortError, UtcpError, UtcpTimeoutError } from '../../index.js';

/** @internal The error an aborted run rejects with: the signal's UtcpError reason, a timeout, or UtcpAbortError. */
export function runAbortError(signal: AbortSignal): UtcpError {
  const reason: unknown = signal.reason;
  if (reason instanceof UtcpError) return reason;
  if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError') {
    return new UtcpTimeoutError('Agent run', undefined, { cause: reason });
  }
  return new UtcpAbortError('Agent run', { cause: reason });
}

/** @internal Throws the run's abort error when `signal` is aborted. */
export function throwIfRunAborted(signal: AbortSignal): void {
  if (signal.aborted) throw runAbortError(signal);
}

/** @internal Settles with `work`, or rejects with the run's abort error as soon as `signal` aborts (not waiting for `work`). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  // raceSignal's error is runAbortError's: the UtcpError reason, a timeout, else UtcpAbortError naming the run.
  return raceSignal(work, signal, 'Agent run');
}
