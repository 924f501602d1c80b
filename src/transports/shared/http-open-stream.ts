import { HttpStatusError, TransportError } from '../../core/errors.js';
import type { TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from './auth.js';
import { bodyExcerpt, discardBody } from './http-body.js';
import type { HttpRequestSpec } from './http-request.js';
import { sendHttpRequest, type HttpResponse } from './http-send.js';

export interface OpenStreamOptions {
  signal: AbortSignal;
  /** Names the call in messages, e.g. "SSE call of tool demo.ticks". */
  what: string;
  /** Protocol label for the redirect message ("SSE", "Streamable HTTP"). */
  label: string;
  auth: Auth | null | undefined;
  /** The caller's deadline, for timeout messages. */
  timeoutMs?: number;
}

/**
 * Sends a streaming call request (no redirects: a 3xx is an error, docs/design/security.md#redirects) and returns the
 * 2xx response with its body unread. After a 401 with oauth2 auth, `rebuild()` is called once with a fresh token.
 * @throws HttpStatusError (≥ 400), TRANSPORT_FAILED with code HTTP_STATUS (3xx), network/abort errors.
 */
export async function openStreamingResponse(
  build: () => Promise<HttpRequestSpec>,
  ctx: TransportContext,
  options: OpenStreamOptions,
): Promise<HttpResponse> {
  for (let attempt = 0; ; attempt++) {
    const spec = await build();
    const response = await sendHttpRequest(spec, ctx, {
      signal: options.signal,
      context: 'tool invocation',
      followRedirects: false,
      what: options.what,
      timeoutMs: options.timeoutMs,
    });
    const { statusCode } = response;
    if (statusCode === 401 && attempt === 0 && options.auth?.auth_type === 'oauth2') {
      await discardBody(response.body);
      invalidateAuth(options.auth, ctx);
      continue;
    }
    if (statusCode >= 300 && statusCode < 400) {
      await discardBody(response.body);
      throw new TransportError(
        `${options.what}: ${redactUrl(response.url)} answered with a redirect (HTTP ${statusCode}); ${options.label} calls never follow redirects`,
        { code: 'HTTP_STATUS' },
      );
    }
    if (statusCode >= 400) {
      const excerpt = await bodyExcerpt(response.body);
      throw new HttpStatusError(statusCode, redactUrl(response.url), excerpt, response.statusText);
    }
    return response;
  }
}
