import { HttpStatusError } from '../../core/errors.js';
import { abortError } from '../../core/signals.js';
import type { CallOptions, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { HttpCallTemplate } from './template.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../shared/auth.js';
import { bodyExcerpt, decodeResponseBody, discardBody, headerValue, readBodyCapped } from '../shared/http-body.js';
import { createDeadline } from '../shared/http-deadline.js';
import { buildHttpRequest } from '../shared/http-request.js';
import { sendHttpRequest } from '../shared/http-send.js';

/** Call timeout when the template sets none, in ms. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

/**
 * One `http` tool call (docs/design/transports.md#http-call): build, send (redirect rules, template timeout),
 * retry once after a 401 with oauth2 auth, decode by media type.
 * @throws HttpStatusError for status ≥ 400, RESPONSE_TOO_LARGE, TIMEOUT/ABORTED, URL_POLICY, HEADER_INJECTION.
 */
export async function callHttpTool(tool: Tool, args: JsonObject, template: HttpCallTemplate, ctx: TransportContext, options: CallOptions): Promise<unknown> {
  const what = `HTTP call of tool ${tool.name}`;
  const timeoutMs = template.timeout ?? DEFAULT_HTTP_TIMEOUT_MS;
  // The client's per-call signal can carry the template timeout itself: no second controller per call.
  const disarm = options.armTimeout?.(timeoutMs, what);
  const deadline = disarm ? undefined : createDeadline(options.signal, timeoutMs, what);
  const signal = deadline?.signal ?? options.signal;
  try {
    for (let attempt = 0; ; attempt++) {
      const spec = await buildHttpRequest(template, args, ctx, {
        method: template.http_method ?? 'GET',
        contentType: template.content_type ?? 'application/json',
        defaultBodyField: 'body',
        signal,
      });
      const response = await sendHttpRequest(spec, ctx, { signal, context: 'tool invocation', followRedirects: true, what, timeoutMs: options.timeoutMs });
      if (response.statusCode === 401 && attempt === 0 && template.auth?.auth_type === 'oauth2') {
        await discardBody(response.body);
        invalidateAuth(template.auth, ctx);
        continue;
      }
      if (response.statusCode >= 400) {
        const excerpt = await bodyExcerpt(response.body);
        throw new HttpStatusError(response.statusCode, redactUrl(response.url), excerpt, response.statusText);
      }
      const bytes = await readBodyCapped(response.body, response.headers, ctx.limits.max_response_bytes, () => `${what} (${redactUrl(response.url)})`);
      return decodeResponseBody(bytes, headerValue(response.headers, 'content-type'));
    }
  } catch (error) {
    if (signal.aborted) throw abortError(signal, what, options.timeoutMs);
    throw error;
  } finally {
    disarm?.();
    deadline?.dispose();
  }
}
