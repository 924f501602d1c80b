/**
 * When and how long to wait before retrying a model request (docs/design/agent.md#retries):
 * 429, 5xx and connection failures before the first byte of output are retried with exponential
 * backoff and full jitter, unless the server said how long to wait (`retry-after-ms`, `Retry-After`,
 * the providers' rate-limit reset headers, Gemini's `RetryInfo`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { sleep } from '../../index.js';

export interface ModelRetryOptions {
  /** Retries after the first try (0 turns retrying off). @default 2 */
  maxRetries?: number;
  /** First backoff ceiling; it doubles per retry (full jitter: a random wait up to the ceiling). @default 500 */
  baseDelayMs?: number;
  /** Longest wait between tries; a server asking for more is not retried. @default 60_000 */
  maxDelayMs?: number;
  /** Replaces the timer (tests). Must reject when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Replaces Math.random (tests). */
  random?: () => number;
}

export const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 60_000;

/** What the retry loop works with, defaults filled in. */
export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
}

/** Waits `ms`, rejecting with the signal's reason as soon as it aborts (the deadline helper's `sleep`). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal);
}

export function retryPolicy(options: ModelRetryOptions | undefined, maxRetries: number | undefined): RetryPolicy {
  const n = maxRetries ?? options?.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`maxRetries must be an integer >= 0, got ${n}`);
  return {
    maxRetries: n,
    baseDelayMs: options?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
    maxDelayMs: options?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
    sleep: options?.sleep ?? abortableSleep,
    random: options?.random ?? Math.random,
  };
}

/** Statuses worth another try: rate limits, timeouts on the server side, overload and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `1s`, `6m0s`, `250ms`, `1h2m3.5s` (OpenAI's reset headers) → milliseconds. */
export function parseDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = '';
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
    matched += m[0];
  }
  return matched.length > 0 && matched === text.trim() ? total : undefined;
}

/** An RFC 3339 / HTTP date or a number of seconds → milliseconds from `now`. */
function untilDate(text: string, now: number): number | undefined {
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long the server asked us to wait, in milliseconds, or undefined when it did not say:
 * `retry-after-ms`, `Retry-After` (seconds or a date), then the rate-limit reset of an exhausted
 * limit (`anthropic-ratelimit-*-reset`, OpenAI `x-ratelimit-reset-*`), then Gemini's `RetryInfo.retryDelay`.
 */
export function serverRetryDelayMs(headers: IncomingHttpHeaders, body: string, now = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const after = header(headers, 'retry-after');
  if (after !== undefined) {
    if (/^\d+(\.\d+)?$/.test(after.trim())) return Number(after) * 1000;
    const d = untilDate(after, now);
    if (d !== undefined) return d;
  }
  const resets: number[] = [];
  for (const name of Object.keys(headers)) {
    const m = /^(anthropic-ratelimit-(.+)|x-ratelimit)-reset(-(.+))?$/.exec(name);
    if (!m) continue;
    const remainingName = name.replace(/-reset(-|$)/, '-remaining$1');
    const remaining = header(headers, remainingName);
    if (remaining !== undefined && Number(remaining) > 0) continue;
    const value = header(headers, name) ?? '';
    const d = name.startsWith('anthropic-') ? untilDate(value, now) : parseDuration(value);
    if (d !== undefined) resets.push(d);
  }
  if (resets.length > 0) return Math.max(...resets);
  try {
    const details =
      (JSON.parse(body) as { error?: { details?: Array<{ '@type'?: string; retryDelay?: string }> } }).error?.details ??
      [];
    const info = details.find((d) => typeof d?.retryDelay === 'string');
    if (info) return parseDuration(info.retryDelay!);
  } catch {
    // not JSON
  }
  return undefined;
}

/** Full jitter: a random wait between 0 and `base * 2^attempt`, capped. `attempt` counts from 0. */
export function backoffDelayMs(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(policy.random() * ceiling);
}

/** Errors of the connection itself (refused, reset, closed before an answer), as opposed to ours. */
export function isConnectionFailure(error: unknown): boolean {
  const codes = new Set([
    'ECONNRESET',
    'ECONNREFUSED',
    'EPIPE',
    'ETIMEDOUT',
    'EAI_AGAIN',
    'UND_ERR_SOCKET',
    'UND_ERR_CLOSED',
    'UND_ERR_CONNECT_TIMEOUT',
  ]);
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && codes.has(code)) return true;
  }
  return false;
}
