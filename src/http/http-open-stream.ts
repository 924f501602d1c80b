import { HttpStatusError } from '../core/errors.js';
import type { TransportContext } from '../core/transport.js';
import type { Auth } from '../core/types.js';
import { redactUrl } from '../core/url-policy.js';
import { invalidateAuth } from './auth.js';
import { bodyExcerpt, discardBody, ERROR_BODY_BYTES } from './http-body.js';
import { exchangeDefaults } from './http-dispatcher.js';
import { httpExchange, type StreamedHttpResponse } from './http-exchange.js';
import type { HttpRequestSpec } from './http-request.js';

export interface OpenStreamOptions {
  signal: AbortSignal;
  /** Names the call in messages, e.g. "SSE call of tool demo.ticks". */
  what: string;
  auth: Auth | null | undefined;
  /** Deadline until the response headers arrive, in ms (the body is the caller's). */
  headersTimeoutMs?: number;
  /** The caller's deadline, for timeout messages. */
  timeoutMs?: number;
  /** The tool comes from a remote-sourced manual (loopback refused, dial guarded). */
  remoteSource?: boolean;
}

/**
 * Sends a streaming call request through the HTTP exchange in stream mode (no redirects: a 3xx is an
 * error, docs/design/security.md#redirects) and returns the 2xx response with its body unread. After a 401 with oauth2 auth, `build()`
 * is called once more with a fresh token.
 * @throws HttpStatusError (≥ 400), TRANSPORT_FAILED with code HTTP_STATUS (3xx), network/abort errors.
 */
export async function openStreamingResponse(
  build: () => Promise<HttpRequestSpec>,
  ctx: TransportContext,
  options: OpenStreamOptions,
): Promise<StreamedHttpResponse> {
  const defaults = exchangeDefaults(ctx);
  for (let attempt = 0; ; attempt++) {
    const spec = await build();
    const response = await httpExchange(spec, {
      dispatcher: defaults.dispatcher,
      maxRedirects: defaults.maxRedirects,
      logger: defaults.logger,
      mode: 'stream',
      signal: options.signal,
      timeoutMs: options.headersTimeoutMs,
      callerTimeoutMs: options.timeoutMs,
      what: options.what,
      context: 'tool invocation',
      redirect: 'refuse',
      remoteSource: options.remoteSource,
    });
    const { status } = response;
    if (status === 401 && attempt === 0 && options.auth?.auth_type === 'oauth2') {
      await discardBody(response.body);
      invalidateAuth(options.auth, ctx);
      continue;
    }
    if (status >= 400) {
      const excerpt = await bodyExcerpt(response.body, ERROR_BODY_BYTES);
      throw new HttpStatusError(status, redactUrl(response.url), excerpt, response.statusText);
    }
    return response;
  }
}
