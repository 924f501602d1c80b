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
import { request, type Dispatcher } from 'undici';
import { abortError, withTimeout } from '../../core/deadline.js';
import { HttpStatusError, TransportError, UrlPolicyError, UtcpError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { assertUrlAllowed, isLoopbackLike, redactUrl, sameOrigin } from '../../core/url-policy.js';
import { bodyExcerpt, destroyBody, discardBody, headerValue, readBodyCapped, type ResponseBody } from './http-body.js';

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
  /** Cancels the exchange. */
  signal?: AbortSignal;
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
  signal: AbortSignal | undefined,
  what: string,
  url: URL | string,
  timeoutMs?: number,
): Error {
  if (signal?.aborted) return abortError(signal, what, timeoutMs);
  if (cause instanceof UtcpError) return cause;
  const code = (cause as { code?: string } | undefined)?.code;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new TransportError(`${what}: request to ${redactUrl(url)} failed (${code ?? reason})`, { cause });
}

function keepHeaders(headers: Record<string, string>, keep: (lowerName: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) if (keep(k.toLowerCase())) out[k] = headers[k];
  return out;
}

/**
 * Sends one undici request, settled at once when `signal` aborts: undici does not reject a request
 * still resolving its host or connecting, so without the race a deadline would wait for the dial.
 */
function send(
  url: URL,
  init: NonNullable<Parameters<typeof request>[1]>,
  signal: AbortSignal | undefined,
): Promise<Dispatcher.ResponseData> {
  const pending = request(url, init) as Promise<Dispatcher.ResponseData>;
  if (!signal) return pending;
  if (signal.aborted) {
    pending.then(
      (r) => destroyBody(r.body),
      () => {},
    );
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      pending.then(
        (r) => destroyBody(r.body),
        () => {},
      );
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
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
  const signal = scope?.signal ?? options.signal;
  const timeoutMs = options.callerTimeoutMs ?? options.timeoutMs;
  const stream = options.mode === 'stream';
  let keepScope = false;
  try {
    const response = await exchange(req, options, signal, timeoutMs);
    if (stream) {
      // The timeout covered the headers; the body keeps following the caller's signal until it closes.
      if (scope) {
        scope.clearTimer();
        keepScope = true;
        const body = response.body as ResponseBody & { once?(event: 'close', listener: () => void): unknown };
        if (body.once) body.once('close', () => scope.dispose());
        else scope.dispose();
      }
      return response;
    }
    const buffered = options as BufferedExchangeOptions;
    const shown = () => `${options.what} (${redactUrl(response.url)})`;
    if (response.status >= 200 && response.status < 300) {
      const bytes = await readBodyCapped(response.body, response.headers, buffered.maxBytes, shown);
      return {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
        url: response.url,
        bytes,
        truncated: false,
      };
    }
    const limit = buffered.errorBodyBytes ?? 64 * 1024;
    const text = await bodyExcerpt(response.body, limit + 1);
    const bytes = Buffer.from(text, 'utf8');
    const truncated = bytes.byteLength > limit;
    return {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      url: response.url,
      bytes: truncated ? bytes.subarray(0, limit) : bytes,
      truncated,
    };
  } catch (error) {
    if (
      signal?.aborted &&
      !(
        error instanceof UtcpError &&
        (error.code === 'TIMEOUT' || error.code === 'ABORTED' || error.code === 'CLIENT_CLOSED')
      )
    ) {
      throw abortError(signal, options.what, timeoutMs);
    }
    throw error;
  } finally {
    if (!keepScope) scope?.dispose();
  }
}

const NEVER = new AbortController().signal;

async function exchange(
  req: HttpExchangeRequest,
  options: HttpExchangeOptions,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): Promise<StreamedHttpResponse> {
  const first = assertUrlAllowed(req.url, options.context);
  if (first.hash) first.hash = '';
  const choose = options.dispatcher;
  let remote = options.remoteSource === true;
  if (remote && isLoopbackLike(first)) refuseLoopback(first, options.context);
  const maxRedirects = options.maxRedirects ?? 5;
  let url = first;
  let method = req.method ?? 'GET';
  let headers: Record<string, string> = req.headers ?? {};
  let body = req.body;
  let hops = 0;
  for (;;) {
    let response: Dispatcher.ResponseData;
    try {
      response = await send(
        url,
        {
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          dispatcher: typeof choose === 'function' ? choose(remote) : choose,
          signal,
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        signal,
      );
    } catch (cause) {
      throw networkError(cause, signal, options.what, url, timeoutMs);
    }
    const { statusCode, headers: responseHeaders, body: responseBody } = response;
    if (
      !REDIRECT_STATUSES.has(statusCode) ||
      (options.redirect === 'follow' && !headerValue(responseHeaders, 'location'))
    ) {
      return {
        status: statusCode,
        statusText: STATUS_CODES[statusCode] ?? '',
        headers: responseHeaders,
        body: responseBody,
        url,
      };
    }
    await discardBody(responseBody);
    if (options.redirect === 'refuse' || maxRedirects === 0) {
      const why =
        options.redirect === 'refuse'
          ? 'these requests never follow redirects'
          : 'redirects are off (limits.max_redirects is 0)';
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
      errorBodyBytes: 2048,
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
