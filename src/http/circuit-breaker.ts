/**
 * The per-origin circuit breaker of one client (docs/design/resilience.md#circuit-breaker): after
 * `failureThreshold` consecutive failures of an origin, its calls fail fast with `CircuitOpenError` for `openMs`;
 * then one call passes as a probe: its success closes the circuit, its failure opens it again.
 * One `CircuitBreakers` per client (kept in the transport context's `shared` memo), never process-wide.
 */
import { CircuitOpenError } from '../core/errors.js';

interface OriginState {
  /** Consecutive failures. */
  failures: number;
  /** When the circuit may let a probe through (ms since the epoch); 0 while closed. */
  openUntil: number;
  /** A probe call is in flight. */
  probing: boolean;
}

export interface BreakerSettings {
  readonly failureThreshold: number;
  readonly openMs: number;
}

/** What `admit` hands back: report the call's outcome on it exactly once. */
export interface BreakerTicket {
  /** The origin answered (any status that is not a server failure). */
  success(): void;
  /** A connection failure, a timeout or a server failure (5xx). */
  failure(): void;
  /** The call ended without telling anything about the origin (aborted by the caller). */
  release(): void;
}

export class CircuitBreakers {
  readonly #origins = new Map<string, OriginState>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Lets a call to `origin` through, or throws `CircuitOpenError` while its circuit is open (or its probe is in flight).
   * @param what names the call in the error, e.g. "HTTP call of tool demo.echo".
   */
  admit(origin: string, settings: BreakerSettings, what: string): BreakerTicket {
    let state = this.#origins.get(origin);
    let probe = false;
    if (state && state.openUntil > 0) {
      const now = this.#now();
      if (now < state.openUntil || state.probing)
        throw new CircuitOpenError(what, origin, new Date(state.openUntil), now >= state.openUntil);
      state.probing = probe = true;
    }
    let settled = false;
    const settle = (outcome: 'success' | 'failure' | 'release') => {
      if (settled) return;
      settled = true;
      state = this.#origins.get(origin);
      if (outcome === 'success') {
        this.#origins.delete(origin);
        return;
      }
      if (outcome === 'release') {
        if (probe && state) state.probing = false;
        return;
      }
      if (!state) this.#origins.set(origin, (state = { failures: 0, openUntil: 0, probing: false }));
      state.failures++;
      if (probe) state.probing = false;
      if (probe || state.failures >= settings.failureThreshold) state.openUntil = this.#now() + settings.openMs;
    };
    return {
      success: () => settle('success'),
      failure: () => settle('failure'),
      release: () => settle('release'),
    };
  }

  /** The state of one origin (tests, diagnostics). */
  state(origin: string): 'closed' | 'open' | 'half-open' {
    const s = this.#origins.get(origin);
    if (!s || s.openUntil === 0) return 'closed';
    return this.#now() < s.openUntil && !s.probing ? 'open' : 'half-open';
  }
}
