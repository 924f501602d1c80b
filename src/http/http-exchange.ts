/**
 * THE HTTP exchange (docs/design/http-exchange.md#exchange): every HTTP request utcp-kit sends (tool calls,
 * discovery, SSE and streamable HTTP, GraphQL POST, OAuth2 tokens, MCP over HTTP, model requests,
 * `utcp convert`) goes through `httpExchange`. It owns, in one place:
 * - the URL policy on the first URL and on every redirect hop, and the remote→loopback rule;
 * - redirects followed by hand (`max_redirects`; 0 = never follow), 303 → GET, cross-origin hops
 *   forwarding only an allow-list of harmless headers and no body;
 * - the dial guard (a remote-sourced request goes through the guarded dispatcher);
 * - response size caps (buffered mode), abort/timeout and the mapping of failures to typed errors.
 */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import {
  abortError,
  asSignal,
  onAbort,
  raceAbort,
  settleError,
  withTimeout,
  type AbortSource,
} from '../core/deadline.js';
import { HttpStatusError, TransportError, UrlPolicyError, UtcpError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { assertUrlAllowed, isLoopbackLike, redactUrl, sameOrigin } from '../core/url-policy.js';
import {
  checkContentLength,
  concatBytes,
  destroyBody,
  discardBody,
  headerValue,
  type ResponseBody,
  ERROR_BODY_BYTES,
} from './http-body.js';
import { markResponseStarted } from './http-retry.js';
import { undici } from './undici.js';
import { errorMessage } from '../core/guards.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Request headers forwarded to another origin on a redirect. Everything else (static template
 * headers such as `X-Password`, auth, cookies, Content-Type of the dropped body) stays behind.
 */
export const CROSS_ORIGIN_SAFE_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-language',
  'accept-encoding',
  'content-language',
  'user-agent',
  'cache-control',
  'pragma',
  'last-event-id',
]);

export interface HttpExchangeRequest {
  url: URL | string;
  /** @default "GET" */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** Picks the connection pool: `remote` is true for requests on behalf of a remote-sourced manual (dial guard on). */
export type DispatcherChoice = Dispatcher | ((remote: boolean) => Dispatcher);

export interface HttpExchangeOptions {
  dispatcher: DispatcherChoice;
  /** Cancels the exchange: a signal, or the call's scope (`callScope`), followed without building a signal. */
  signal?: AbortSource;
  /** This exchange's own deadline: the whole exchange in buffered mode, until the response headers in stream mode. */
  timeoutMs?: number;
  /** The caller's deadline, only for messages. */
  callerTimeoutMs?: number;
  /** Names the operation in messages, e.g. "HTTP call of tool demo.echo". */
  what: string;
  /** URL-policy context of the first URL ("tool invocation", "manual discovery"); hops add " (redirect target)". */
  context: string;
  /** `follow`: redirects followed by hand up to `maxRedirects`; `refuse`: a 3xx is an error. */
  redirect: 'follow' | 'refuse';
  /** Hops to follow. 0 means never follow (a 3xx is then an error). @default 5 */
  maxRedirects?: number;
  /**
   * The request is made for a remote-sourced manual: a loopback-like URL (first or any hop) is refused
   * and connections go through the dial guard. Hops reached from a remote origin are treated the same.
   */
  remoteSource?: boolean;
  logger?: Logger;
}

export interface StreamExchangeOptions extends HttpExchangeOptions {
  mode: 'stream';
}

export interface BufferedExchangeOptions extends HttpExchangeOptions {
  mode?: 'buffered';
  /** Largest 2xx body; above it RESPONSE_TOO_LARGE. */
  maxBytes: number;
  /** How much of a non-2xx body to keep (the rest is dropped, `truncated` set). @default 64 KiB */
  errorBodyBytes?: number;
}

export interface HttpExchangeResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The URL that answered (after redirects). */
  url: URL;
}

export interface StreamedHttpResponse extends HttpExchangeResponse {
  /** Unread; the caller reads or destroys it (`destroyBody`). */
  body: ResponseBody;
}

export interface BufferedHttpResponse extends HttpExchangeResponse {
  bytes: Uint8Array;
  /** A non-2xx body longer than `errorBodyBytes` was cut. */
  truncated: boolean;
}

/** Turns a failure of undici into a typed error: the abort reason when aborted, else TRANSPORT_FAILED naming the origin. */
export function networkError(
  cause: unknown,
  signal: AbortSource | undefined,
  what: string,
  url: URL | string,
  timeoutMs?: number,
): Error {
  if (signal?.aborted) return abortError(signal, what, timeoutMs);
  if (cause instanceof UtcpError) return cause;
  const code = (cause as { code?: string } | undefined)?.code;
  const reason = errorMessage(cause);
  return new TransportError(`${what}: request to ${redactUrl(url)} failed (${code ?? reason})`, { cause });
}

function keepHeaders(headers: Record<string, string>, keep: (lowerName: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) if (keep(k.toLowerCase())) out[k] = headers[k];
  return out;
}

/** One hop's answer: status and headers, plus the unread body (stream mode) or the read bytes (buffered mode). */
interface Hop<P> {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** A redirect this exchange handles (its body was or must be discarded). */
  redirect: boolean;
  payload: P;
}

interface HopRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  dispatcher: Dispatcher;
}

/** Decides at the response head whether this exchange handles it as a redirect. */
type IsRedirect = (statusCode: number, headers: IncomingHttpHeaders) => boolean;

/**
 * Stream mode: one undici `request`, settled at once when `signal` aborts (undici does not reject a request
 * still resolving its host or connecting, so without the race a deadline would wait for the dial).
 */
async function streamHop(
  hop: HopRequest,
  source: AbortSource | undefined,
  isRedirect: IsRedirect,
): Promise<Hop<ResponseBody>> {
  const signal = source && asSignal(source);
  const pending = undici.request(hop.url, {
    method: hop.method as Dispatcher.HttpMethod,
    headers: hop.headers,
    body: hop.body,
    dispatcher: hop.dispatcher,
    signal,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const response = signal ? await raceAbort(pending, signal, (reason) => reason, dropResponse) : await pending;
  const redirect = isRedirect(response.statusCode, response.headers);
  if (redirect) await discardBody(response.body);
  return { statusCode: response.statusCode, headers: response.headers, redirect, payload: response.body };
}

/** What an abandoned request still delivers is released: its response body is destroyed. */
function dropResponse(pending: Promise<Dispatcher.ResponseData>): void {
  pending.then(
    (r) => destroyBody(r.body),
    () => {},
  );
}

interface BufferCaps {
  /** Largest 2xx body. */
  maxBytes: number;
  /** Bytes kept of any other status (one more is read to tell whether it was cut). */
  errorBodyBytes: number;
  /** Names the request in a RESPONSE_TOO_LARGE message (built only when needed). */
  shown: (url: URL) => string;
}

/** A redirect body is read up to this much so the connection can be reused; a longer one closes it. */
const REDIRECT_BODY_BYTES = 64 * 1024;

/**
 * Buffered mode: one request on undici's `dispatch` with a handler that collects the body in place
 * (size caps enforced while it arrives). Measured: this costs about half the CPU of `undici.request` +
 * body consumption per small JSON call (bench/http.ts), which is most of the gap to raw undici.
 * The abort is wired to the request's own controller; before the request reaches a socket (DNS, connect)
 * the promise settles at once and the request is aborted as soon as undici hands over its controller.
 */
function bufferedHop(
  hop: HopRequest,
  signal: AbortSource | undefined,
  isRedirect: IsRedirect,
  caps: BufferCaps,
): Promise<Hop<BufferedPayload>> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const handler = new BufferingHandler(hop.url, signal, isRedirect, caps, resolve, reject);
    try {
      hop.dispatcher.dispatch(
        {
          origin: hop.url.origin,
          path: hop.url.pathname + hop.url.search,
          method: hop.method as Dispatcher.HttpMethod,
          headers: hop.headers,
          body: hop.body,
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        handler,
      );
    } catch (error) {
      handler.finish(error);
    }
  });
}

type BufferedPayload = { bytes: Uint8Array; truncated: boolean };

/**
 * The dispatch handler of `bufferedHop`, as a class: one object per request instead of a handler literal and a
 * closure per callback (docs/design/http-exchange.md#per-call-cost).
 * Every early end settles the promise first, then aborts the request: undici reports the abort through
 * `onResponseError` synchronously, which must find the promise already settled.
 */
class BufferingHandler implements Dispatcher.DispatchHandler {
  readonly #url: URL;
  readonly #signal: AbortSource | undefined;
  readonly #isRedirect: IsRedirect;
  readonly #caps: BufferCaps;
  readonly #resolve: (hop: Hop<BufferedPayload>) => void;
  readonly #reject: (error: unknown) => void;
  readonly #unsubscribe: (() => void) | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #statusCode = 0;
  #headers: IncomingHttpHeaders = {};
  #redirect = false;
  /** How many body bytes to keep; past it: 2xx → RESPONSE_TOO_LARGE, else stop reading. */
  #keep = 0;
  #tooLargeFails = false;
  readonly #chunks: Buffer[] = [];
  #total = 0;

  constructor(
    url: URL,
    signal: AbortSource | undefined,
    isRedirect: IsRedirect,
    caps: BufferCaps,
    resolve: (hop: Hop<BufferedPayload>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#url = url;
    this.#signal = signal;
    this.#isRedirect = isRedirect;
    this.#caps = caps;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#unsubscribe = signal
      ? onAbort(signal, (reason) => {
          this.finish(reason);
          this.#controller?.abort(reason as Error);
        })
      : undefined;
  }

  /** Settles the request's promise once: with `error`, else with what was kept of the body. */
  finish(error: unknown, truncated = false): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#unsubscribe?.();
    if (error !== undefined) {
      this.#reject(error);
      return;
    }
    const chunks = this.#chunks;
    let bytes: Uint8Array = chunks.length === 1 ? chunks[0] : concatBytes(chunks, this.#total);
    if (bytes.byteLength > this.#keep) bytes = bytes.subarray(0, this.#keep);
    this.#resolve({
      statusCode: this.#statusCode,
      headers: this.#headers,
      redirect: this.#redirect,
      payload: { bytes, truncated },
    });
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.#controller = c;
    if (this.#settled) c.abort(this.#signal?.reason ?? new Error('request no longer needed'));
  }

  onResponseStart(c: Dispatcher.DispatchController, code: number, responseHeaders: IncomingHttpHeaders): void {
    this.#statusCode = code;
    const headers = (this.#headers = responseHeaders);
    this.#redirect = this.#isRedirect(code, headers);
    if (this.#redirect) this.#keep = 0;
    else if (code >= 200 && code < 300) {
      const caps = this.#caps;
      this.#keep = caps.maxBytes;
      this.#tooLargeFails = true;
      try {
        checkContentLength(headers, caps.maxBytes, () => caps.shown(this.#url));
      } catch (error) {
        this.finish(error);
        c.abort(error as Error);
      }
    } else this.#keep = this.#caps.errorBodyBytes;
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#total += chunk.byteLength;
    if (this.#redirect) {
      if (this.#total > REDIRECT_BODY_BYTES) {
        this.finish(undefined);
        c.abort(new Error('redirect body discarded'));
      }
      return;
    }
    this.#chunks.push(chunk);
    if (this.#total > this.#keep) {
      if (this.#tooLargeFails) {
        const error = new UtcpError(
          'RESPONSE_TOO_LARGE',
          `${this.#caps.shown(this.#url)}: response is larger than the ${this.#caps.maxBytes}-byte limit`,
        );
        this.finish(error);
        c.abort(error);
      } else {
        this.finish(undefined, true);
        c.abort(new Error('error body excerpt complete'));
      }
    }
  }

  onResponseEnd(): void {
    this.finish(undefined);
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    // A failure after the status line is not a connection failure before any response (never retried).
    this.finish(this.#statusCode !== 0 ? markResponseStarted(error) : error);
  }
}

function refuseLoopback(url: URL, context: string): never {
  throw new UrlPolicyError(
    `${context}: ${redactUrl(url)} refused: a tool from a remote manual may not reach a loopback address`,
  );
}

export function httpExchange(req: HttpExchangeRequest, options: StreamExchangeOptions): Promise<StreamedHttpResponse>;
export function httpExchange(req: HttpExchangeRequest, options: BufferedExchangeOptions): Promise<BufferedHttpResponse>;
/**
 * Sends a request by the rules above. Stream mode returns the final response with its body unread;
 * buffered mode reads it (2xx capped at `maxBytes`, others cut at `errorBodyBytes`).
 * Status codes are returned, not thrown; a refused or excess redirect is a `TransportError` (HTTP_STATUS).
 * @throws URL_POLICY, TRANSPORT_FAILED, HTTP_STATUS (redirect refused), RESPONSE_TOO_LARGE, TIMEOUT/ABORTED.
 */
export async function httpExchange(
  req: HttpExchangeRequest,
  options: StreamExchangeOptions | BufferedExchangeOptions,
): Promise<StreamedHttpResponse | BufferedHttpResponse> {
  const scope =
    options.timeoutMs !== undefined ? withTimeout(options.signal ?? NEVER, options.timeoutMs, options.what) : undefined;
  const signal = scope?.source ?? options.signal;
  const timeoutMs = options.callerTimeoutMs ?? options.timeoutMs;
  let keepScope = false;
  try {
    if (options.mode === 'stream') {
      const response = await exchange(req, options, signal, timeoutMs, streamHop);
      // The timeout covered the headers; the body keeps following the caller's signal until it closes.
      if (scope) {
        scope.clearTimer();
        keepScope = true;
        const body = response.payload as ResponseBody & { once?(event: 'close', listener: () => void): unknown };
        if (body.once) body.once('close', () => scope.dispose());
        else scope.dispose();
      }
      return {
        status: response.statusCode,
        statusText: STATUS_CODES[response.statusCode] ?? '',
        headers: response.headers,
        url: response.url,
        body: response.payload,
      };
    }
    const caps: BufferCaps = {
      maxBytes: options.maxBytes,
      errorBodyBytes: options.errorBodyBytes ?? 64 * 1024,
      shown: (url) => `${options.what} (${redactUrl(url)})`,
    };
    const response = await exchange(req, options, signal, timeoutMs, (hop, s, isRedirect) =>
      bufferedHop(hop, s, isRedirect, caps),
    );
    return {
      status: response.statusCode,
      statusText: STATUS_CODES[response.statusCode] ?? '',
      headers: response.headers,
      url: response.url,
      bytes: response.payload.bytes,
      truncated: response.payload.truncated,
    };
  } catch (error) {
    throw signal ? settleError(error, signal, options.what, timeoutMs) : error;
  } finally {
    if (!keepScope) scope?.dispose();
  }
}

const NEVER = new AbortController().signal;

/** Sends the request and follows redirects by the rules above; `sendHop` does one request (stream or buffered). */
async function exchange<P>(
  req: HttpExchangeRequest,
  options: HttpExchangeOptions,
  signal: AbortSource | undefined,
  timeoutMs: number | undefined,
  sendHop: (hop: HopRequest, signal: AbortSource | undefined, isRedirect: IsRedirect) => Promise<Hop<P>>,
): Promise<Hop<P> & { url: URL }> {
  const first = assertUrlAllowed(req.url, options.context);
  if (first.hash) first.hash = '';
  const choose = options.dispatcher;
  let remote = options.remoteSource === true;
  if (remote && isLoopbackLike(first)) refuseLoopback(first, options.context);
  const maxRedirects = options.maxRedirects ?? 5;
  const follow = options.redirect === 'follow';
  const isRedirect: IsRedirect = (status, headers) =>
    REDIRECT_STATUSES.has(status) && (!follow || headerValue(headers, 'location') !== undefined);
  let url = first;
  let method = req.method ?? 'GET';
  let headers: Record<string, string> = req.headers ?? {};
  let body = req.body;
  let hops = 0;
  for (;;) {
    let response: Hop<P>;
    try {
      response = await sendHop(
        { url, method, headers, body, dispatcher: typeof choose === 'function' ? choose(remote) : choose },
        signal,
        isRedirect,
      );
    } catch (cause) {
      throw networkError(cause, signal, options.what, url, timeoutMs);
    }
    if (!response.redirect) return Object.assign(response, { url });
    const { statusCode, headers: responseHeaders } = response;
    if (!follow || maxRedirects === 0) {
      const why = !follow ? 'these requests never follow redirects' : 'redirects are off (limits.max_redirects is 0)';
      throw new TransportError(
        `${options.what}: ${redactUrl(url)} answered with a redirect (HTTP ${statusCode}); ${why}`,
        { code: 'HTTP_STATUS' },
      );
    }
    hops += 1;
    if (hops > maxRedirects) {
      throw new TransportError(
        `${options.what}: Too many redirects (more than ${maxRedirects}) from ${redactUrl(first)}`,
      );
    }
    let next: URL;
    try {
      next = new URL(headerValue(responseHeaders, 'location')!, url);
    } catch (cause) {
      throw new TransportError(`${options.what}: invalid redirect Location from ${redactUrl(url)}`, { cause });
    }
    const hopContext = `${options.context} (redirect target)`;
    assertUrlAllowed(next, hopContext);
    next.hash = '';
    // A hop reached from a remote origin is as untrusted as a remote manual: loopback refused, dial guarded.
    if (!isLoopbackLike(url)) remote = true;
    if (remote && isLoopbackLike(next)) {
      throw new UrlPolicyError(
        `${hopContext}: ${redactUrl(next)} refused: a redirect from remote ${redactUrl(url)} may not reach a loopback address`,
      );
    }
    if (statusCode === 303 && method !== 'HEAD') {
      method = 'GET';
      body = undefined;
      headers = keepHeaders(headers, (name) => name !== 'content-type' && name !== 'content-length');
    }
    if (!sameOrigin(url, next)) {
      body = undefined;
      headers = keepHeaders(headers, (name) => CROSS_ORIGIN_SAFE_HEADERS.has(name));
    }
    options.logger?.debug?.(`${options.what}: following HTTP ${statusCode} redirect`, {
      from: redactUrl(url),
      to: redactUrl(next),
    });
    url = next;
  }
}

export interface FetchDocumentOptions {
  dispatcher: DispatcherChoice;
  signal?: AbortSignal;
  /** Deadline for the whole download, in ms. */
  timeoutMs?: number;
  /** Largest document, in bytes. */
  maxBytes: number;
  /** @default 5 */
  maxRedirects?: number;
  /** Request headers (e.g. Accept). */
  headers?: Record<string, string>;
  /** @default "document download" */
  context?: string;
  /** @default "Download of <url>" */
  what?: string;
  logger?: Logger;
}

/**
 * Downloads one document (a manual, an OpenAPI spec) by the exchange rules: URL policy, redirects
 * re-checked hop by hop, size cap, deadline. @returns the bytes, the final URL and its Content-Type.
 * @throws HttpStatusError for a status ≥ 400, and every `httpExchange` error.
 */
export async function fetchDocument(
  url: string | URL,
  options: FetchDocumentOptions,
): Promise<{ bytes: Uint8Array; url: URL; contentType: string | undefined }> {
  const what = options.what ?? `Download of ${redactUrl(url)}`;
  const response = await httpExchange(
    { url, method: 'GET', headers: options.headers },
    {
      dispatcher: options.dispatcher,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      what,
      context: options.context ?? 'document download',
      redirect: 'follow',
      maxRedirects: options.maxRedirects,
      maxBytes: options.maxBytes,
      errorBodyBytes: ERROR_BODY_BYTES,
      logger: options.logger,
    },
  );
  if (response.status >= 400 || response.status < 200) {
    throw new HttpStatusError(
      response.status,
      redactUrl(response.url),
      Buffer.from(response.bytes).toString('utf8'),
      response.statusText,
    );
  }
  return { bytes: response.bytes, url: response.url, contentType: headerValue(response.headers, 'content-type') };
}
