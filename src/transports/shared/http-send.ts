import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { TransportError, UrlPolicyError, UtcpError } from '../../core/errors.js';
import { abortError } from '../../core/signals.js';
import type { TransportContext } from '../../core/transport.js';
import { assertUrlAllowed, isLoopbackLike, isSensitiveHeader, redactUrl, sameOrigin } from '../../core/url-policy.js';
import { discardBody, headerValue, type ResponseBody } from './http-body.js';
import { httpDispatcher } from './http-dispatcher.js';
import type { HttpRequestSpec } from './http-request.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface SendHttpOptions {
  signal: AbortSignal;
  /** URL-policy context of the first URL ("manual discovery", "tool invocation"); hops use "<context> (redirect target)". */
  context: string;
  /** Follow redirects by hand (docs/design/security.md#redirects); otherwise a 3xx is returned as is. */
  followRedirects: boolean;
  /** Names the operation in messages, e.g. "HTTP call of tool demo.echo". */
  what: string;
  /** The caller's deadline, for timeout messages. */
  timeoutMs?: number;
}

export interface HttpResponse {
  statusCode: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
  /** The URL that answered (after redirects). */
  url: URL;
}

/** Turns a failure of undici into a typed error: the abort reason when aborted, else TRANSPORT_FAILED naming the origin. */
export function networkError(cause: unknown, signal: AbortSignal, what: string, url: URL, timeoutMs?: number): Error {
  if (signal.aborted) return abortError(signal, what, timeoutMs);
  if (cause instanceof UtcpError) return cause;
  const code = (cause as { code?: string } | undefined)?.code;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new TransportError(`${what}: request to ${redactUrl(url)} failed (${code ?? reason})`, { cause });
}

/**
 * Sends one request on the client's dispatcher. With `followRedirects`, follows up to `max_redirects`
 * hops: each hop re-checked by the URL policy, remote→loopback hops refused, 303 → GET without body,
 * cross-origin hops lose sensitive and auth headers, cookies and the body. The query is never re-appended.
 * @throws URL_POLICY, TRANSPORT_FAILED ("Too many redirects", network errors), TIMEOUT/ABORTED.
 */
export async function sendHttpRequest(spec: HttpRequestSpec, ctx: TransportContext, options: SendHttpOptions): Promise<HttpResponse> {
  const dispatcher = httpDispatcher(ctx);
  let url = spec.url;
  let method = spec.method;
  let headers: Record<string, string> = { ...spec.headers };
  let body = spec.body;
  let hops = 0;
  for (;;) {
    let response;
    try {
      response = await request(url, {
        method: method as 'GET',
        headers,
        body,
        dispatcher,
        signal: options.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    } catch (cause) {
      throw networkError(cause, options.signal, options.what, url, options.timeoutMs);
    }
    const { statusCode, headers: responseHeaders, body: responseBody } = response;
    const location = headerValue(responseHeaders, 'location');
    if (!options.followRedirects || !REDIRECT_STATUSES.has(statusCode) || !location) {
      return { statusCode, statusText: STATUS_CODES[statusCode] ?? '', headers: responseHeaders, body: responseBody, url };
    }
    await discardBody(responseBody);
    hops += 1;
    if (hops > ctx.limits.max_redirects) {
      throw new TransportError(`${options.what}: Too many redirects (more than ${ctx.limits.max_redirects}) from ${redactUrl(spec.url)}`);
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch (cause) {
      throw new TransportError(`${options.what}: invalid redirect Location from ${redactUrl(url)}`, { cause });
    }
    assertUrlAllowed(next, `${options.context} (redirect target)`);
    if (!isLoopbackLike(url) && isLoopbackLike(next)) {
      throw new UrlPolicyError(
        `${options.context} (redirect target): ${redactUrl(next)} refused: a redirect from remote ${redactUrl(url)} may not reach a loopback address`,
      );
    }
    if (statusCode === 303 && method !== 'HEAD') {
      method = 'GET';
      body = undefined;
      headers = withoutHeaders(headers, (name) => name === 'content-type' || name === 'content-length');
    }
    if (!sameOrigin(url, next)) {
      body = undefined;
      headers = withoutHeaders(
        headers,
        (name) => name === 'content-type' || name === 'content-length' || isSensitiveHeader(name, spec.authHeaderNames),
      );
    }
    ctx.logger.debug?.(`${options.what}: following HTTP ${statusCode} redirect`, { from: redactUrl(url), to: redactUrl(next) });
    url = next;
  }
}

function withoutHeaders(headers: Record<string, string>, drop: (lowerName: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop(k.toLowerCase())));
}
