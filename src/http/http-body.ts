import type { IncomingHttpHeaders } from 'node:http';
import { UtcpError } from '../core/errors.js';

/** A readable response body as undici returns it (an async iterable of byte chunks). */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): unknown;
  /** undici's consume fast path; used when the declared length is within the cap. */
  arrayBuffer?(): Promise<ArrayBuffer>;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Destroys a body we no longer read. undici emits an `error` (RequestAbortedError) when a body is destroyed
 * before its end; without a listener that would be an uncaught exception in the host process.
 */
export function destroyBody(body: ResponseBody | undefined): void {
  if (!body) return;
  body.on?.('error', () => {});
  body.destroy();
}

/** First value of a response header (undici may give string[]). */
export function headerValue(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The lowercased media type of a Content-Type header, parameters dropped ("" when absent). */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/**
 * True when the text, less surrounding whitespace, is one or more ASCII digits (a usable Content-Length); read by
 * character codes, as it runs on every response (docs/design/http-exchange.md#per-call-cost).
 */
function isDigits(text: string): boolean {
  const t = text.trim();
  if (t.length === 0) return false;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Throws RESPONSE_TOO_LARGE when a declared Content-Length already exceeds `maxBytes`. */
export function checkContentLength(
  headers: IncomingHttpHeaders,
  maxBytes: number,
  what: string | (() => string),
): void {
  const declared = headerValue(headers, 'content-length');
  if (declared !== undefined && isDigits(declared) && Number(declared) > maxBytes) {
    throw new UtcpError(
      'RESPONSE_TOO_LARGE',
      `${typeof what === 'function' ? what() : what}: response declares ${declared} bytes, above the ${maxBytes}-byte limit`,
    );
  }
}

/**
 * Reads a whole body, failing with RESPONSE_TOO_LARGE as soon as it passes `maxBytes`
 * (the declared Content-Length is checked first). The body is destroyed on failure.
 */
/** `what` names the request in errors; pass a function to build it only when needed. */
export async function readBodyCapped(
  body: ResponseBody,
  headers: IncomingHttpHeaders,
  maxBytes: number,
  what: string | (() => string),
): Promise<Uint8Array> {
  try {
    checkContentLength(headers, maxBytes, what);
  } catch (error) {
    destroyBody(body);
    throw error;
  }
  // A declared length within the cap (undici enforces it) lets undici's own consume path read the body,
  // which is markedly faster than async iteration for small JSON answers.
  const declared = headerValue(headers, 'content-length');
  if (body.arrayBuffer && declared !== undefined && isDigits(declared)) {
    try {
      return new Uint8Array(await body.arrayBuffer());
    } catch (error) {
      destroyBody(body);
      throw error;
    }
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        throw new UtcpError(
          'RESPONSE_TOO_LARGE',
          `${typeof what === 'function' ? what() : what}: response is larger than the ${maxBytes}-byte limit`,
        );
      }
      chunks.push(chunk);
    }
  } catch (error) {
    destroyBody(body);
    throw error;
  }
  return concatBytes(chunks, total);
}

/** Drains and discards a body we do not need (so the connection can be reused), up to a small cap. */
export async function discardBody(body: ResponseBody): Promise<void> {
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (total > 64 * 1024) break;
    }
  } catch {
    // The body is being discarded; a read failure changes nothing.
  } finally {
    destroyBody(body);
  }
}

export function concatBytes(
  chunks: readonly Uint8Array[],
  total = chunks.reduce((n, c) => n + c.byteLength, 0),
): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/** Stateless when `decode` is called without `stream`, so one instance serves every call. */
/** How much of an error body is read: enough to parse its problem details (docs/design/http-exchange.md#problem-details). */
export const ERROR_BODY_BYTES = 64 * 1024;

const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** UTF-8 text of some bytes (BOM kept; invalid sequences replaced). */
export function utf8(bytes: Uint8Array): string {
  return UTF8.decode(bytes);
}

/**
 * A binary body a tool answered with, bytes in base64: an image or sound (the MCP content-item shape), or other
 * binary data (`binary`: an archive, a PDF, a video...), which UTF-8 decoding would have mangled.
 */
export interface MediaResult {
  type: 'image' | 'audio' | 'binary';
  /** The response's media type, parameters dropped, e.g. `image/png`. */
  mimeType: string;
  /** The body, base64. */
  data: string;
}

/** `application/*` subtypes that are text (besides any `json`, `xml` or `yaml` subtype or suffix). */
const TEXT_APPLICATION = new Set([
  'javascript',
  'ecmascript',
  'x-javascript',
  'x-www-form-urlencoded',
  'graphql',
  'sql',
  'csv',
  'x-sh',
  'x-tex',
  'rtf',
]);

/**
 * How a body of this media type is returned (docs/design/transports.md#http-response): `image`/`audio`/`binary`
 * as a base64 media result, `text` decoded, `sniff` (an `application/*` type we do not know, `octet-stream`
 * included) as text when the bytes are valid UTF-8 without NUL, else as binary.
 */
function bodyKind(type: string): 'image' | 'audio' | 'binary' | 'text' | 'sniff' {
  const slash = type.indexOf('/');
  if (slash < 0) return 'text'; // no (or a malformed) Content-Type: text, as ever
  const top = type.slice(0, slash);
  const sub = type.slice(slash + 1);
  if (top === 'text' || /json|xml|yaml/.test(sub)) return 'text';
  if (top === 'image') return 'image';
  if (top === 'audio') return 'audio';
  if (top === 'video' || top === 'font' || top === 'model') return 'binary';
  if (top === 'application') return TEXT_APPLICATION.has(sub) ? 'text' : 'sniff';
  return 'text';
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF-8 text of the bytes, or undefined when they are not valid UTF-8 or contain NUL (binary data then). */
function strictText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Decodes a tool response by media type (docs/design/transports.md#http-response): `json` → parsed (fallback text);
 * `image/*` / `audio/*` / binary data → a `MediaResult`; else text; empty → "".
 */
export function decodeResponseBody(bytes: Uint8Array, contentType: string | undefined): unknown {
  if (bytes.byteLength === 0) return '';
  const type = mediaType(contentType);
  const kind = bodyKind(type);
  let text: string | undefined;
  if (kind === 'sniff') text = strictText(bytes);
  if (kind === 'image' || kind === 'audio' || kind === 'binary' || (kind === 'sniff' && text === undefined)) {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    return { type: kind === 'sniff' ? 'binary' : kind, mimeType: type, data } satisfies MediaResult;
  }
  text ??= utf8(bytes);
  if (type.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** The first `maxBytes` of a body as text, for error excerpts (never throws). */
export async function bodyExcerpt(body: ResponseBody, maxBytes = 2048): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total >= maxBytes) break;
    }
  } catch {
    // Best effort: an excerpt is optional.
  } finally {
    destroyBody(body);
  }
  const text = utf8(concatBytes(chunks).subarray(0, maxBytes));
  return text.endsWith('\uFFFD') ? text.slice(0, -1) : text;
}
