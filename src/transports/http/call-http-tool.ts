import { callScope, MAX_TIMER_MS, validMs, withTimeout } from '../../core/deadline.js';
import { HttpStatusError, UtcpError } from '../../core/errors.js';
import { DEFAULT_RESILIENCE } from '../../core/resilience.js';
import type { CallOptions, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { HttpCallTemplate } from './template.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../../http/auth.js';
import { decodeResponseBody, ERROR_BODY_BYTES, headerValue, utf8 } from '../../http/http-body.js';
import { httpExchange, type BufferedHttpResponse } from '../../http/http-exchange.js';
import { CircuitBreakers } from '../../http/circuit-breaker.js';
import {
  backoffMs,
  connectionFailureCode,
  isRetryStatus,
  mayRetry,
  reportRetry,
  retryAfterMs,
  sleepUnlessAborted,
} from '../../http/http-retry.js';
import { buildHttpRequest, buildHttpRequestNow, type BuildHttpRequestOptions } from '../../http/http-request.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';

/** Call timeout when the template sets none, in ms. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/**
 * One `http` tool call (docs/design/transports.md#http-call): build, exchange (redirect rules, template
 * timeout, size cap), retry once after a 401 with oauth2 auth, decode by media type. Retries on 429/502/503/504 and
 * connection failures, and the per-origin circuit breaker, follow `options.resilience`
 * (docs/design/resilience.md#retries).
 * @throws HttpStatusError for status ≥ 400, RESPONSE_TOO_LARGE, TIMEOUT/ABORTED, URL_POLICY, HEADER_INJECTION,
 *   CircuitOpenError (CIRCUIT_OPEN).
 */
export async function callHttpTool(
  tool: Tool,
  args: JsonObject,
  template: HttpCallTemplate,
  ctx: TransportContext,
  options: CallOptions,
): Promise<unknown> {
  const what = `HTTP call of tool ${tool.name}`;
  const startedAt = performance.now();
  const templateTimeout = template.timeout ?? DEFAULT_HTTP_TIMEOUT_MS;
  // The time the call may take in all: the template's timeout and the caller's deadline, whichever ends first.
  const budgetMs = Math.min(validMs(templateTimeout) ? templateTimeout : Infinity, options.timeoutMs ?? Infinity);
  // On the client's per-call signal the template timeout is armed on that signal itself (no second controller).
  const scope = withTimeout(callScope(options), templateTimeout, what);
  const signal = scope.source;
  const defaults = exchangeDefaults(ctx);
  const method = template.http_method ?? 'GET';
  const resilience = options.resilience ?? DEFAULT_RESILIENCE;
  const retries = mayRetry(method, template.idempotent) ? resilience.retries : 0;
  const breakers = resilience.circuitBreaker
    ? ctx.shared('http.circuit-breakers', () => new CircuitBreakers())
    : undefined;
  let oauthRetried = false;
  let retry = 0;
  /** Never sleep past the deadline (nor past Node's longest timer): such a wait ends the call with its failure now. */
  const fitsDeadline = (delayMs: number) =>
    delayMs < Math.min(MAX_TIMER_MS, budgetMs - (performance.now() - startedAt));
  const pause = (delayMs: number, reason: string): Promise<void> => {
    reportRetry(ctx.logger, { tool: tool.name, manual: options.manualName, attempt: retry, delayMs, reason });
    return sleepUnlessAborted(delayMs, signal, what, options.timeoutMs);
  };
  try {
    for (;;) {
      const requestOptions: BuildHttpRequestOptions = {
        method,
        contentType: template.content_type ?? 'application/json',
        defaultBodyField: 'body',
        signal,
        remoteSource: options.remoteSource,
        inputs: tool.inputs,
      };
      const spec =
        buildHttpRequestNow(template, args, requestOptions) ??
        (await buildHttpRequest(template, args, ctx, requestOptions));
      const ticket = breakers?.admit(new URL(spec.url).origin, resilience.circuitBreaker!, what);
      let response: BufferedHttpResponse;
      try {
        response = await httpExchange(spec, {
          dispatcher: defaults.dispatcher,
          maxRedirects: defaults.maxRedirects,
          logger: defaults.logger,
          signal,
          callerTimeoutMs: options.timeoutMs,
          what,
          context: 'tool invocation',
          redirect: 'follow',
          remoteSource: options.remoteSource,
          maxBytes: ctx.limits.max_response_bytes,
          // Enough of an error body to parse its problem details (docs/design/http-exchange.md#problem-details).
          errorBodyBytes: ERROR_BODY_BYTES,
        });
      } catch (error) {
        const code = connectionFailureCode(error);
        // No answer in time, or a broken connection, counts against the origin; an abort or a policy refusal does not.
        if (code !== undefined || (error instanceof UtcpError && /^(TIMEOUT|TRANSPORT_FAILED)$/.test(error.code)))
          ticket?.failure();
        else ticket?.release();
        if (code === undefined || retry >= retries || signal.aborted) throw error;
        const delayMs = backoffMs(retry + 1);
        if (!fitsDeadline(delayMs)) throw error;
        retry++;
        await pause(delayMs, `connection ${code}`);
        continue;
      }
      if (response.status >= 500) ticket?.failure();
      else ticket?.success();
      if (response.status === 401 && !oauthRetried && template.auth?.auth_type === 'oauth2') {
        oauthRetried = true;
        invalidateAuth(template.auth, ctx);
        continue;
      }
      if (response.status >= 400) {
        const failure = new HttpStatusError(
          response.status,
          redactUrl(response.url),
          excerpt(response.bytes),
          response.statusText,
        );
        if (!isRetryStatus(response.status) || retry >= retries) throw failure;
        const asked = retryAfterMs(response.headers);
        const delayMs = asked ?? backoffMs(retry + 1);
        // Never sleep past the deadline: a wait that would outlast it ends the call with the server's answer now.
        if (!fitsDeadline(delayMs)) throw failure;
        retry++;
        await pause(delayMs, `status ${response.status}${asked !== undefined ? ' (Retry-After)' : ''}`);
        continue;
      }
      return decodeResponseBody(response.bytes, headerValue(response.headers, 'content-type'));
    }
  } finally {
    scope.dispose();
  }
}

function excerpt(bytes: Uint8Array): string {
  const text = utf8(bytes);
  return text.endsWith('\uFFFD') ? text.slice(0, -1) : text;
}
