import { createParser } from 'eventsource-parser';
import { GraphqlError } from './graphql-error.js';
import { HttpStatusError, TransportError, UtcpError } from '../../core/errors.js';
import { abortError, createDeadline, onAbort } from '../../core/deadline.js';
import { redactUrl } from '../../core/url-policy.js';
import { bodyExcerpt } from '../../http/http-body.js';
import { httpExchange, type DispatcherChoice } from '../../http/http-exchange.js';
import type { GraphqlBody, GraphqlResponse } from './post-graphql.js';

/** How a subscription travels over HTTP (docs/design/transports.md#graphql-http-subscriptions). */
export type HttpSubscriptionMode = 'sse' | 'multipart' | 'auto';

const ACCEPT: Record<HttpSubscriptionMode, string> = {
  sse: 'text/event-stream',
  multipart: 'multipart/mixed;subscriptionSpec="1.0", application/json;q=0.9',
  auto: 'text/event-stream, multipart/mixed;subscriptionSpec="1.0";q=0.9, application/json;q=0.8',
};

export interface HttpSubscribeOptions {
  dispatcher: DispatcherChoice;
  /** The tool comes from a remote-sourced manual (loopback refused, dial guarded). */
  remoteSource?: boolean;
  url: URL;
  headers: Record<string, string>;
  body: GraphqlBody;
  mode: HttpSubscriptionMode;
  /** Ends the whole subscription. */
  signal: AbortSignal;
  /** Bounds the request until the response headers arrive. */
  setupSignal: AbortSignal;
  /** Largest event or part, in bytes. */
  maxItemBytes: number;
  what: string;
  /** Called once the server answered with a stream (the setup deadline can stop). */
  onReady?: () => void;
}

/**
 * In `auto` mode the server did not answer with a stream (a 4xx, or a single JSON result): the caller
 * tries the WebSocket protocols next. `reason` says what the server did.
 */
export class NoHttpSubscription extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}

/**
 * Runs one GraphQL subscription over HTTP and yields each execution result: GraphQL over SSE in the
 * distinct-connections mode (`event: next` / `event: complete`), or multipart HTTP (Apollo's
 * `subscriptionSpec=1.0` parts `{payload}`, heartbeats `{}`, and incremental-delivery parts with `hasNext`).
 * The response's media type decides which. Stopping early (break, abort) closes the connection.
 * @throws NoHttpSubscription (auto mode only), HttpStatusError, TransportError, GraphqlError, the typed abort error.
 */
export async function* subscribeOverHttp(
  options: HttpSubscribeOptions,
): AsyncGenerator<GraphqlResponse, void, undefined> {
  const { what } = options;
  const shown = redactUrl(options.url);
  // The setup signal bounds the request until the stream starts (its timer stops in onReady).
  const scope = createDeadline([options.signal, options.setupSignal], undefined, what);
  try {
    yield* streamResults(options, scope.signal, shown);
  } finally {
    scope.dispose();
  }
}

async function* streamResults(
  options: HttpSubscribeOptions,
  signal: AbortSignal,
  shown: string,
): AsyncGenerator<GraphqlResponse, void, undefined> {
  const { what } = options;
  // GraphQL requests never follow redirects: the exchange refuses a 3xx.
  const response = await httpExchange(
    {
      url: options.url,
      method: 'POST',
      headers: { ...options.headers, 'content-type': 'application/json', accept: ACCEPT[options.mode] },
      body: JSON.stringify(options.body),
    },
    {
      mode: 'stream',
      dispatcher: options.dispatcher,
      signal,
      what,
      context: 'GraphQL subscription',
      redirect: 'refuse',
      remoteSource: options.remoteSource,
    },
  );
  const statusCode = response.status;
  const mediaType = String(response.headers['content-type'] ?? '').toLowerCase();
  const isSse = mediaType.startsWith('text/event-stream');
  const isMultipart = mediaType.startsWith('multipart/mixed');
  if (statusCode >= 400 || (!isSse && !isMultipart)) {
    const excerpt = await bodyExcerpt(response.body);
    if (options.mode === 'auto')
      throw new NoHttpSubscription(`HTTP ${statusCode}${mediaType ? ` ${mediaType.split(';')[0]}` : ''}`);
    const envelope = parseEnvelope(excerpt);
    if (envelope && Array.isArray(envelope.errors) && envelope.errors.length > 0)
      throw new GraphqlError(what, envelope.errors, envelope.data);
    if (statusCode >= 400) throw new HttpStatusError(statusCode, shown, excerpt);
    throw new TransportError(`${what}: ${shown} did not answer with a stream (${mediaType || 'no content type'})`, {
      code: 'PROTOCOL_ERROR',
    });
  }
  options.onReady?.();
  const body = response.body as typeof response.body & { readableEnded?: boolean };
  // The body ends with the subscription: abort (caller, close, timeout) destroys it.
  const offAbort = onAbort(options.signal, () =>
    body.destroy(options.signal.reason instanceof Error ? options.signal.reason : undefined),
  );
  const decoder = isSse
    ? new SseResults(options.maxItemBytes, what, shown)
    : new MultipartResults(boundaryOf(mediaType), options.maxItemBytes, what, shown);
  let finished = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      for (const item of decoder.push(chunk)) yield item;
      if (decoder.done) {
        finished = true;
        return;
      }
    }
    decoder.end();
    finished = true;
  } catch (error) {
    if (options.signal.aborted) throw abortError(options.signal, what);
    if (error instanceof UtcpError) throw error;
    throw new TransportError(`${what}: the stream from ${shown} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    offAbort();
    if (!finished || !body.readableEnded) body.destroy();
  }
}

function parseEnvelope(text: string): GraphqlResponse | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as GraphqlResponse)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The `boundary` parameter of a multipart media type (quoted or not); `-` when absent, as incremental delivery defaults. */
function boundaryOf(mediaType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(mediaType);
  return match ? (match[1] ?? match[2]) : '-';
}

interface ResultDecoder {
  readonly done: boolean;
  push(chunk: Buffer): GraphqlResponse[];
  /** The body ended: an error unless the protocol said the stream was complete. */
  end(): void;
}

/** GraphQL over SSE (distinct connections): `next` events carry results, `complete` ends. */
class SseResults implements ResultDecoder {
  done = false;
  #out: GraphqlResponse[] = [];
  #error: UtcpError | undefined;
  #sawNamedEvents = false;
  readonly #decoder = new TextDecoder('utf-8');
  readonly #parser;
  readonly #what: string;
  readonly #shown: string;

  constructor(maxItemBytes: number, what: string, shown: string) {
    this.#what = what;
    this.#shown = shown;
    this.#parser = createParser({
      maxBufferSize: maxItemBytes,
      onEvent: (event) => {
        if (this.done) return;
        const type = event.event ?? 'message';
        if (type === 'complete') {
          this.done = true;
          return;
        }
        if (type === 'next') this.#sawNamedEvents = true;
        if (type !== 'next' && type !== 'message') return;
        if (event.data === '') return;
        try {
          this.#out.push(asResult(JSON.parse(event.data)));
        } catch (cause) {
          this.#error ??= new TransportError(`${what}: ${shown} sent an event that is not a GraphQL result`, {
            code: 'PROTOCOL_ERROR',
            cause,
          });
        }
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') {
          this.#error ??= new UtcpError(
            'RESPONSE_TOO_LARGE',
            `${what}: an event is larger than the ${maxItemBytes}-byte stream item limit`,
          );
        }
      },
    });
  }

  push(chunk: Buffer): GraphqlResponse[] {
    const text = this.#decoder.decode(chunk, { stream: true });
    if (text) this.#parser.feed(text);
    const out = this.#out;
    this.#out = [];
    if (this.#error) throw this.#error;
    return out;
  }

  end(): void {
    // With `event: next` the protocol ends with `event: complete`; a stream of plain events ends with the body.
    if (!this.done && this.#sawNamedEvents) {
      throw new TransportError(`${this.#what}: ${this.#shown} ended the event stream without "complete" (cut off)`, {
        code: 'TRANSPORT_FAILED',
      });
    }
  }
}

/** Multipart HTTP: parts separated by `--boundary`, ended by `--boundary--`. */
class MultipartResults implements ResultDecoder {
  done = false;
  readonly #delimiter: string;
  readonly #maxItemBytes: number;
  readonly #what: string;
  readonly #shown: string;
  readonly #decoder = new TextDecoder('utf-8');
  #buffer = '';
  /** Past the first delimiter (what comes before it is the preamble). */
  #inPart = false;

  constructor(boundary: string, maxItemBytes: number, what: string, shown: string) {
    this.#delimiter = `--${boundary}`;
    this.#maxItemBytes = maxItemBytes;
    this.#what = what;
    this.#shown = shown;
  }

  push(chunk: Buffer): GraphqlResponse[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    const out: GraphqlResponse[] = [];
    for (;;) {
      const at = this.#findDelimiter();
      if (at < 0) break;
      const after = this.#buffer.slice(at + this.#delimiter.length);
      // Need to see what follows the delimiter: `--` (the end) or the end of its line.
      if (after.length < 2) break;
      const closing = after.startsWith('--');
      const lineEnd = after.indexOf('\n');
      if (!closing && lineEnd < 0) break;
      if (this.#inPart) {
        const item = this.#part(this.#buffer.slice(0, at));
        if (item) out.push(item);
      }
      if (closing) {
        this.done = true;
        this.#buffer = '';
        return out;
      }
      this.#inPart = true;
      this.#buffer = after.slice(lineEnd + 1);
      if (this.done) return out;
    }
    if (Buffer.byteLength(this.#buffer) > this.#maxItemBytes + 1024) {
      throw new UtcpError(
        'RESPONSE_TOO_LARGE',
        `${this.#what}: a part is larger than the ${this.#maxItemBytes}-byte stream item limit`,
      );
    }
    return out;
  }

  end(): void {
    if (!this.done) {
      throw new TransportError(
        `${this.#what}: ${this.#shown} ended the multipart stream without its closing delimiter (cut off)`,
        { code: 'TRANSPORT_FAILED' },
      );
    }
  }

  /** Index of the next delimiter that starts a line (or the buffer, before the first part). */
  #findDelimiter(): number {
    if (!this.#inPart && this.#buffer.startsWith(this.#delimiter)) return 0;
    const at = this.#buffer.indexOf(`\n${this.#delimiter}`);
    return at < 0 ? -1 : at + 1;
  }

  /** One part: headers, a blank line, a JSON body. Heartbeats (`{}`) yield nothing. */
  #part(raw: string): GraphqlResponse | undefined {
    const text = raw.replace(/\r?\n$/, '');
    const split = /\r?\n\r?\n/.exec(text);
    const body = (split ? text.slice(split.index + split[0].length) : text).trim();
    if (body === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (cause) {
      throw new TransportError(`${this.#what}: ${this.#shown} sent a part that is not JSON`, {
        code: 'PROTOCOL_ERROR',
        cause,
      });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TransportError(`${this.#what}: ${this.#shown} sent a part that is not a JSON object`, {
        code: 'PROTOCOL_ERROR',
      });
    }
    const part = value as Record<string, unknown>;
    if (Object.keys(part).length === 0) return undefined;
    if ('payload' in part) {
      // Apollo's subscription parts: {payload: result}; {payload: null, errors} is a fatal transport-level error.
      if (part.payload === null || part.payload === undefined) {
        this.done = true;
        return {
          errors:
            Array.isArray(part.errors) && part.errors.length > 0
              ? part.errors
              : [{ message: 'the subscription ended with an error' }],
        };
      }
      return asResult(part.payload);
    }
    // Incremental delivery: a result with `hasNext`; `hasNext: false` is the last one.
    if (part.hasNext === false) this.done = true;
    if (!('data' in part) && !('errors' in part) && !('incremental' in part)) return undefined;
    return asResult(part);
  }
}

function asResult(value: unknown): GraphqlResponse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
  return value as GraphqlResponse;
}
