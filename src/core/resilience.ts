/**
 * Resilience settings of tool calls (docs/design/resilience.md): the `resilience` block of the client config, of the
 * client options and of a call template, its validation, how the layers combine, and the per-manual concurrency
 * limit. Retries and the circuit breaker are applied by the transports that can judge a failure (the HTTP stack);
 * core only resolves the settings and passes them in `CallOptions.resilience`.
 */
import { isPlainObject } from './guards.js';
import { abortError, onAbort, type AbortSource } from './deadline.js';
import type { ValidationIssue } from './errors.js';

/** Circuit breaker settings (docs/design/resilience.md#circuit-breaker). */
export interface CircuitBreakerConfig {
  /** Consecutive failures of one origin that open its circuit. @default 5 */
  failure_threshold?: number;
  /** How long an open circuit fails calls fast before one probe may pass, in milliseconds. @default 30000 */
  open_ms?: number;
}

/** The `resilience` block (docs/design/resilience.md#config): client config, client options, or a call template. */
export interface ResilienceConfig {
  /** Retries after the first try of a retryable call (0 turns retrying off). @default 2 */
  retries?: number;
  /** Opt-in per-origin circuit breaker: an object (`{}` for the defaults) turns it on, `false` or null off. */
  circuit_breaker?: CircuitBreakerConfig | false | null;
  /** Calls of one manual running at once; excess calls queue. null: no limit. @default no limit */
  max_concurrency?: number | null;
}

/** The settings one call runs with, defaults filled in. */
export interface ResolvedResilience {
  readonly retries: number;
  readonly circuitBreaker?: { readonly failureThreshold: number; readonly openMs: number };
  readonly maxConcurrency?: number;
}

export const DEFAULT_RETRIES = 2;
export const MAX_RETRIES = 10;
const DEFAULT_FAILURE_THRESHOLD = 5;
const DEFAULT_OPEN_MS = 30_000;

/** What a call runs with when nothing is configured. */
export const DEFAULT_RESILIENCE: ResolvedResilience = Object.freeze({ retries: DEFAULT_RETRIES });

const KEYS = new Set(['retries', 'circuit_breaker', 'max_concurrency']);
const BREAKER_KEYS = new Set(['failure_threshold', 'open_ms']);

const isObj = isPlainObject;
const isInt = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Checks one `resilience` block; every problem names its field under `path` (e.g. `resilience.retries`). */
export function validateResilience(value: unknown, path: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (value === undefined || value === null) return issues;
  if (!isObj(value)) return [{ path, message: 'expected an object' }];
  for (const key of Object.keys(value))
    if (!KEYS.has(key))
      issues.push({
        path: `${path}.${key}`,
        message: 'unknown field (expected retries, circuit_breaker, max_concurrency)',
      });
  if (value.retries !== undefined && !isInt(value.retries, 0, MAX_RETRIES))
    issues.push({ path: `${path}.retries`, message: `expected an integer from 0 to ${MAX_RETRIES}` });
  const mc = value.max_concurrency;
  if (mc !== undefined && mc !== null && !isInt(mc, 1, 1_000_000))
    issues.push({ path: `${path}.max_concurrency`, message: 'expected an integer >= 1 (or null for no limit)' });
  const cb = value.circuit_breaker;
  if (cb !== undefined && cb !== null && cb !== false) {
    if (!isObj(cb)) issues.push({ path: `${path}.circuit_breaker`, message: 'expected an object, false or null' });
    else {
      for (const key of Object.keys(cb))
        if (!BREAKER_KEYS.has(key))
          issues.push({
            path: `${path}.circuit_breaker.${key}`,
            message: 'unknown field (expected failure_threshold, open_ms)',
          });
      if (cb.failure_threshold !== undefined && !isInt(cb.failure_threshold, 1, 1_000_000))
        issues.push({ path: `${path}.circuit_breaker.failure_threshold`, message: 'expected an integer >= 1' });
      if (cb.open_ms !== undefined && !isInt(cb.open_ms, 1, 2 ** 31 - 1))
        issues.push({ path: `${path}.circuit_breaker.open_ms`, message: 'expected an integer number of ms >= 1' });
    }
  }
  return issues;
}

/**
 * Combines the layers, later ones winning field by field (docs/design/resilience.md#config): client, then the
 * manual's template, then the tool's own template. Layers are validated already.
 */
export function resolveResilience(...layers: Array<ResilienceConfig | null | undefined>): ResolvedResilience {
  let retries = DEFAULT_RETRIES;
  let breaker: CircuitBreakerConfig | undefined;
  let maxConcurrency: number | undefined;
  let any = false;
  for (const layer of layers) {
    if (!layer) continue;
    any = true;
    if (layer.retries !== undefined) retries = layer.retries;
    if (layer.max_concurrency !== undefined) maxConcurrency = layer.max_concurrency ?? undefined;
    const cb = layer.circuit_breaker;
    if (cb === false || cb === null) breaker = undefined;
    else if (cb !== undefined) breaker = { ...breaker, ...cb };
  }
  if (!any) return DEFAULT_RESILIENCE;
  return Object.freeze({
    retries,
    ...(breaker
      ? {
          circuitBreaker: Object.freeze({
            failureThreshold: breaker.failure_threshold ?? DEFAULT_FAILURE_THRESHOLD,
            openMs: breaker.open_ms ?? DEFAULT_OPEN_MS,
          }),
        }
      : {}),
    ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
  });
}

/** The `resilience` field of a template, when it has one. */
export function templateResilience(template: unknown): ResilienceConfig | undefined {
  const r = isObj(template) ? template.resilience : undefined;
  return isObj(r) ? (r as ResilienceConfig) : undefined;
}

/**
 * The per-manual concurrency limit (docs/design/resilience.md#concurrency): at most `limit` calls run at once,
 * the others wait in order. A waiting call leaves the queue as soon as its deadline or signal ends it (or the client
 * closes), with the call's own typed error.
 */
export class ConcurrencyLimiter {
  readonly limit: number;
  #active = 0;
  readonly #queue: Array<() => void> = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Calls running now. */
  get active(): number {
    return this.#active;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Takes a slot, waiting for one when all are busy. Call `release()` exactly once after a resolved acquire. */
  acquire(source: AbortSource, what: string, timeoutMs?: number): Promise<void> | undefined {
    if (source.aborted) return Promise.reject(abortError(source, what, timeoutMs));
    if (this.#active < this.limit && this.#queue.length === 0) {
      this.#active++;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        unsubscribe();
        this.#active++;
        resolve();
      };
      const unsubscribe = onAbort(source, () => {
        const at = this.#queue.indexOf(grant);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(abortError(source, what, timeoutMs));
      });
      this.#queue.push(grant);
    });
  }

  /** Frees a slot and hands it to the first waiting call. */
  release(): void {
    this.#active--;
    const next = this.#queue.shift();
    if (next) next();
  }
}
