import { request, type Dispatcher } from 'undici';
import { HttpStatusError, TransportError } from '../../core/errors.js';
import { redactUrl } from '../../core/url-policy.js';
import { discardBody, readBodyCapped } from '../shared/http-body.js';

export interface GraphqlBody {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
}

/** The parsed GraphQL response envelope. */
export interface GraphqlResponse {
  data?: unknown;
  errors?: unknown;
  [key: string]: unknown;
}

export interface PostOptions {
  dispatcher: Dispatcher;
  headers: Record<string, string>;
  signal: AbortSignal;
  maxBytes: number;
  /** For messages: "GraphQL discovery of manual x", "GraphQL tool x.y". */
  what: string;
}

/**
 * POSTs one GraphQL request. Redirects are never followed (a 3xx is an error), the body is read
 * up to `maxBytes`, and a non-2xx status is an HttpStatusError unless the body is a GraphQL envelope
 * with `errors` (GraphQL over HTTP answers 4xx for request errors), which is returned for the caller to raise.
 * @throws UtcpError RESPONSE_TOO_LARGE, TransportError (PROTOCOL_ERROR, TRANSPORT_FAILED), HttpStatusError
 */
export async function postGraphql(url: URL, body: GraphqlBody, options: PostOptions): Promise<GraphqlResponse> {
  const { signal, what } = options;
  const shown = redactUrl(url);
  const response = await request(url, {
    method: 'POST',
    dispatcher: options.dispatcher,
    signal,
    headers: {
      ...options.headers,
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
    },
    body: JSON.stringify(body),
  });
  const { statusCode } = response;
  if (statusCode >= 300 && statusCode < 400) {
    await discardBody(response.body);
    throw new TransportError(`${what}: ${shown} answered with a redirect (HTTP ${statusCode}); GraphQL requests never follow redirects`);
  }
  const text = Buffer.from(await readBodyCapped(response.body, response.headers, options.maxBytes, what)).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    if (statusCode >= 400) throw new HttpStatusError(statusCode, shown, text.slice(0, 2048), '', { cause });
    throw new TransportError(`${what}: ${shown} did not answer with JSON (HTTP ${statusCode})`, { code: 'PROTOCOL_ERROR', cause });
  }
  const envelope = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as GraphqlResponse) : undefined;
  if (statusCode >= 400) {
    if (envelope && Array.isArray(envelope.errors) && envelope.errors.length > 0) return envelope;
    throw new HttpStatusError(statusCode, shown, text.slice(0, 2048));
  }
  if (!envelope || (!('data' in envelope) && !('errors' in envelope))) {
    throw new TransportError(`${what}: ${shown} answered JSON without "data" or "errors"`, { code: 'PROTOCOL_ERROR' });
  }
  return envelope;
}
