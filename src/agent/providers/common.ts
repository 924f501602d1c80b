/** Options and helpers every built-in provider adapter shares. */
import type { DispatcherChoice } from '../../internal-http.js';
import type { MediaContent } from '../messages.js';
import type { ModelRetryOptions } from './retry.js';

/** undici's `Dispatcher`, as the HTTP stack names it (docs/design/README.md#source-layout: undici only in src/http). */
export type Dispatcher = Exclude<DispatcherChoice, (remote: boolean) => unknown>;

/** Connection, deadline, retry and media settings common to the built-in adapters. */
export interface ModelConnectionOptions {
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /** Extra body fields for every request. */
  body?: Record<string, unknown>;
  /** Deadline for one try, body included, in milliseconds. @default 600_000 */
  timeoutMs?: number;
  /** Largest response body accepted, in bytes. @default 33_554_432 */
  maxResponseBytes?: number;
  /**
   * undici dispatcher (proxy, connection pool); the caller's, never closed by the model.
   * @default the model's own pool, like a client's: HTTPS_PROXY/HTTP_PROXY with NO_PROXY, loopback direct; closed by `close()`
   */
  dispatcher?: Dispatcher;
  /** Retries after a 429, a 5xx or a connection failure before any output; 0 turns them off. @default 2 */
  maxRetries?: number;
  /** Backoff settings (and a `sleep` hook for tests). */
  retry?: ModelRetryOptions;
  /**
   * Whether images (and sounds, where the provider takes them) from tools and users are sent as native
   * blocks. `false` for a model that takes none: they become a short text note. @default true
   */
  media?: boolean;
  /** Largest image or sound sent, in bytes (decoded); bigger ones become a text note. @default 5_242_880 */
  maxMediaBytes?: number;
}

export const DEFAULT_MAX_MEDIA_BYTES = 5 * 1024 * 1024;

/** The decoded size of base64 data. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}

/** Splits media into what the provider gets natively and a text note for the rest. */
export function splitMedia(
  media: readonly MediaContent[] | undefined,
  options: ModelConnectionOptions,
  accepts: (m: MediaContent) => boolean,
): { native: MediaContent[]; note: string } {
  const native: MediaContent[] = [];
  const notes: string[] = [];
  const max = options.maxMediaBytes ?? DEFAULT_MAX_MEDIA_BYTES;
  for (const m of media ?? []) {
    const bytes = base64Bytes(m.data);
    if (options.media === false)
      notes.push(`[${m.type} ${m.mediaType}, ${bytes} bytes, not shown: this model takes no ${m.type}s]`);
    else if (!accepts(m))
      notes.push(`[${m.type} ${m.mediaType}, ${bytes} bytes, not shown: ${m.mediaType} is not accepted here]`);
    else if (bytes > max) notes.push(`[${m.type} ${m.mediaType}, ${bytes} bytes, not shown: larger than ${max} bytes]`);
    else native.push(m);
  }
  return { native, note: notes.join('\n') };
}

/** Joins text parts, skipping empty ones. */
export function joinText(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('\n');
}

/** Image types the major APIs accept. */
export const COMMON_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export function isCommonImage(m: MediaContent): boolean {
  return m.type === 'image' && COMMON_IMAGE_TYPES.has(m.mediaType.toLowerCase());
}

/** Tool input must be an object on the wire; unparseable arguments (already reported to the model) become `{}`. */
export function inputObject(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
