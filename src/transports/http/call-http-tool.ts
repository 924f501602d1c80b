import { callScope, withTimeout } from '../../core/deadline.js';
import { HttpStatusError } from '../../core/errors.js';
import type { CallOptions, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { HttpCallTemplate } from './template.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../../http/auth.js';
import { decodeResponseBody, ERROR_BODY_BYTES, headerValue, utf8 } from '../../http/http-body.js';
import { httpExchange } from '../../http/http-exchange.js';
import { buildHttpRequest } from '../../http/http-request.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';

/** Call timeout when the template sets none, in ms. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/**
 * One `http` tool call (docs/design/transports.md#http-call): build, exchange (redirect rules, template
 * timeout, size cap), retry once after a 401 with oauth2 auth, decode by media type.
 * @throws HttpStatusError for status ≥ 400, RESPONSE_TOO_LARGE, TIMEOUT/ABORTED, URL_POLICY, HEADER_INJECTION.
 */
export async function callHttpTool(
  tool: Tool,
  args: JsonObject,
  template: HttpCallTemplate,
  ctx: TransportContext,
  options: CallOptions,
): Promise<unknown> {
  const what = `HTTP call of tool ${tool.name}`;
  // On the client's per-call signal the template timeout is armed on that signal itself (no second controller).
  const scope = withTimeout(callScope(options), template.timeout ?? DEFAULT_HTTP_TIMEOUT_MS, what);
  const signal = scope.source;
  const defaults = exchangeDefaults(ctx);
  try {
    for (let attempt = 0; ; attempt++) {
      const spec = await buildHttpRequest(template, args, ctx, {
        method: template.http_method ?? 'GET',
        contentType: template.content_type ?? 'application/json',
        defaultBodyField: 'body',
        signal,
        remoteSource: options.remoteSource,
        inputs: tool.inputs,
      });
      const response = await httpExchange(spec, {
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
      if (response.status === 401 && attempt === 0 && template.auth?.auth_type === 'oauth2') {
        invalidateAuth(template.auth, ctx);
        continue;
      }
      if (response.status >= 400) {
        throw new HttpStatusError(
          response.status,
          redactUrl(response.url),
          excerpt(response.bytes),
          response.statusText,
        );
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
