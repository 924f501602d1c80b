import { HttpStatusError, TransportError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { redactUrl } from '../../core/url-policy.js';
import { httpExchange, type DispatcherChoice } from '../../http/http-exchange.js';

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
  dispatcher: DispatcherChoice;
  logger?: Logger;
  /** The tool comes from a remote-sourced manual (loopback refused, dial guarded). */
  remoteSource?: boolean;
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
  const response = await httpExchange(
    {
      url,
      method: 'POST',
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
      },
      body: JSON.stringify(body),
    },
    {
      dispatcher: options.dispatcher,
      logger: options.logger,
      signal,
      what,
      context: 'GraphQL request',
      redirect: 'refuse',
      remoteSource: options.remoteSource,
      maxBytes: options.maxBytes,
      // A 4xx body may be a GraphQL envelope with `errors`: read it under the same cap.
      errorBodyBytes: options.maxBytes,
    },
  );
  const statusCode = response.status;
  const text = Buffer.from(response.bytes).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    if (statusCode >= 400) throw new HttpStatusError(statusCode, shown, text.slice(0, 65_536), '', { cause });
    throw new TransportError(`${what}: ${shown} did not answer with JSON (HTTP ${statusCode})`, {
      code: 'PROTOCOL_ERROR',
      cause,
    });
  }
  const envelope =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as GraphqlResponse) : undefined;
  if (statusCode >= 400) {
    if (envelope && Array.isArray(envelope.errors) && envelope.errors.length > 0) return envelope;
    throw new HttpStatusError(statusCode, shown, text.slice(0, 65_536));
  }
  if (!envelope || (!('data' in envelope) && !('errors' in envelope))) {
    throw new TransportError(`${what}: ${shown} answered JSON without "data" or "errors"`, { code: 'PROTOCOL_ERROR' });
  }
  return envelope;
}
