/**
 * When an HTTP tool call is tried again, and how long it waits (docs/design/resilience.md#retries): idempotent
 * methods (or a template marked `idempotent: true`) on 429/502/503/504 and on connection failures before any
 * response; full-jitter exponential backoff unless the server sent `Retry-After`; never past the call's deadline.
 * Every retry is logged and published on `node:diagnostics_channel` (docs/design/resilience.md#retry-events).
 */
import { channel } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http';
import { abortError, sleep, type AbortSource } from '../core/deadline.js';
import type { Logger } from '../core/logger.js';

/** Methods that may be sent twice with the effect of once (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/** Statuses that say "try again later": rate limited, bad gateway, unavailable, gateway timeout. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** Error codes of a connection that failed or closed (refused, reset, DNS hiccup), found on an error or its causes. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** First backoff ceiling in ms; it doubles per retry (full jitter: a random wait up to the ceiling). */
export const BASE_DELAY_MS = 250;
/** Largest backoff ceiling in ms. */
export const MAX_BACKOFF_MS = 10_000;

/** The channel every tool-call retry is published on; name and payload are public (docs/design/resilience.md#retry-events). */
export const TOOL_RETRY_CHANNEL = 'utcp-kit:tool:retry';
const retryChannel = channel(TOOL_RETRY_CHANNEL);

/** The payload published on `utcp-kit:tool:retry`. */
export interface ToolRetryEvent {
  /** The tool's full name, `<manual>.<tool>`. */
  tool: string;
  manual: string;
  /** The retry about to be made: 1 for the first retry. */
  attempt: number;
  /** How long the call waits before it. */
  delayMs: number;
  /** Why, e.g. `status 503` or `connection ECONNREFUSED`. */
  reason: string;
}

/** Whether a request with this method may be repeated: an idempotent method, or a template that says so. */
export function mayRetry(method: string, idempotent: boolean | null | undefined): boolean {
  return idempotent === true || IDEMPOTENT_METHODS.has(method.toUpperCase());
}

export function isRetryStatus(status: number): boolean {
  return RETRY_STATUSES.has(status);
}

/** Marks an undici error raised after the response started (its status line arrived): not retried. */
const RESPONSE_STARTED = Symbol('utcp-kit.responseStarted');

/** Tags `error` as raised after the response began (see `connectionFailureCode`). Returns it. */
export function markResponseStarted(error: unknown): unknown {
  if (typeof error === 'object' && error !== null && Object.isExtensible(error))
    Object.defineProperty(error, RESPONSE_STARTED, { value: true });
  return error;
}

/**
 * The code of a connection failure before any response (`ECONNREFUSED`, `UND_ERR_SOCKET`, ...), found on the error
 * or its causes; undefined for anything else (a response that broke off, our own policy errors, aborts).
 */
export function connectionFailureCode(error: unknown): string | undefined {
  let found: string | undefined;
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 6; depth++) {
    if ((e as { [RESPONSE_STARTED]?: true })[RESPONSE_STARTED]) return undefined;
    const code = (e as { code?: unknown }).code;
    if (found === undefined && typeof code === 'string' && CONNECTION_CODES.has(code)) found = code;
    e = (e as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * How long `Retry-After` asks to wait, in ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when
 * absent or unreadable.
 */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const raw = headers['retry-after'];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Full jitter: a random wait between 0 and `BASE_DELAY_MS * 2^(retry - 1)`, capped. `retry` counts from 1. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Waits `ms`; rejects with the typed abort/timeout error as soon as `source` aborts (the timer is cleared). */
export async function sleepUnlessAborted(
  ms: number,
  source: AbortSource,
  what: string,
  timeoutMs?: number,
): Promise<void> {
  try {
    await sleep(ms, source);
  } catch {
    throw abortError(source, what, timeoutMs);
  }
}

/** Tells the logger and the diagnostics channel about one retry. No URL, header or argument value is included. */
export function reportRetry(logger: Logger | undefined, event: ToolRetryEvent): void {
  logger?.warn?.(
    { tool: event.tool, manual: event.manual, attempt: event.attempt, delayMs: event.delayMs, reason: event.reason },
    `Retrying tool ${event.tool} (retry ${event.attempt}) in ${event.delayMs} ms: ${event.reason}`,
  );
  if (retryChannel.hasSubscribers) retryChannel.publish(event);
}
