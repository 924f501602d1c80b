/**
 * The one way model adapters talk HTTP: a JSON POST through the library's HTTP exchange (`httpExchange` from
 * `utcp-kit/internal/http`: URL policy, abort race, error mapping) on the model's own proxy-aware pool, one deadline
 * per try, retries (./retry.ts) and secret scrubbing on every error path (docs/design/agent.md#model-requests).
 * The exchange (and undici with it) is imported on the first request, so importing `utcp-kit/agent` stays cheap.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { TransportError, UtcpError } from '../../index.js';
import type { ResponseBody } from '../../internal.js';
import { ModelApiError } from './model-api-error.js';
import {
  backoffDelayMs,
  isConnectionFailure,
  isRetryableStatus,
  retryPolicy,
  serverRetryDelayMs,
  type ModelRetryOptions,
} from './retry.js';
import type { ChatCallOptions, ModelRetryInfo } from '../chat-model.js';
import type { Dispatcher, ModelConnectionOptions } from './common.js';
import { errorMessage } from '../../core/guards.js';

/** A response body: chunks of bytes. */
export type BodyChunks = AsyncIterable<Uint8Array>;

/** @internal One POST to a model API. */
export interface ModelRequest {
  provider: string;
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  /** The caller's signal. */
  signal: AbortSignal;
  /** Deadline for one try, body included. */
  timeoutMs: number;
  /** Strings cut out of every error message, excerpt and cause (API keys). */
  secrets: readonly string[];
  maxResponseBytes: number;
  /** The model's connection pool (`modelConnection`). */
  connection: ModelConnection;
  /** Retry settings; `maxRetries` wins over `retry.maxRetries`. */
  maxRetries?: number;
  retry?: ModelRetryOptions;
  onRetry?: (info: ModelRetryInfo) => void;
}

const ERROR_EXCERPT_BYTES = 4096;
/** Deadline of one model request, body included. */
export const DEFAULT_MODEL_TIMEOUT_MS = 600_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** @internal Resolves `path` under a base URL whose own path is kept (`…/v1` + `chat/completions`), and so is its query (e.g. `api-version`). */
export function endpointUrl(baseUrl: string, path: string): URL {
  const base = new URL(baseUrl);
  const url = new URL(path, `${base.origin}${base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`}`);
  url.search = base.search;
  return url;
}

/** @internal Reads at most `maxBytes` of a body as UTF-8 text. */
export async function readBodyText(body: BodyChunks, maxBytes: number, what: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new UtcpError('RESPONSE_TOO_LARGE', `${what} is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** @internal Reads a JSON body. */
export async function readBodyJson(body: BodyChunks, maxBytes: number, what: string): Promise<unknown> {
  const text = await readBodyText(body, maxBytes, what);
  try {
    return JSON.parse(text);
  } catch {
    // The parser's message quotes the body, which may echo a credential: keep it out.
    throw new UtcpError('PROTOCOL_ERROR', `${what} is not valid JSON`);
  }
}

/** @internal Parses one stream event's JSON data. */
export function parseEventJson<T>(data: string, provider: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new UtcpError('PROTOCOL_ERROR', `${provider} sent a stream event that is not JSON`);
  }
}

/** @internal The server-sent events of a streaming body, decoded incrementally. */
export async function* readSseEvents(body: BodyChunks): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
  while (queue.length > 0) yield queue.shift()!;
}

/** @internal Replaces every secret (4 characters or more) in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * @internal Removes secrets from an error, its `cause` chain and its string fields (message, stack,
 * bodyExcerpt, …), in place: whatever path an error took, what reaches the caller or an event holds no key.
 */
export function scrubSecrets<E>(error: E, secrets: readonly string[]): E {
  const live = secrets.filter((s) => s.length >= 4);
  if (live.length === 0) return error;
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    for (const key of Object.getOwnPropertyNames(e)) {
      const value = (e as Record<string, unknown>)[key];
      if (typeof value === 'string' && live.some((s) => value.includes(s))) {
        try {
          Object.defineProperty(e, key, {
            value: redact(value, live),
            writable: true,
            configurable: true,
            enumerable: Object.prototype.propertyIsEnumerable.call(e, key),
          });
        } catch {
          // a frozen field: leave it
        }
      }
    }
  }
  return error;
}

/** The provider's own error message when the body is the usual `{ error: { message } }`, else the raw text. */
function errorExcerpt(text: string): string {
  try {
    const parsed = JSON.parse(text) as {
      error?: { message?: unknown; type?: unknown; status?: unknown } | string;
      message?: unknown;
    };
    const e = parsed.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') {
      const kind = typeof e.type === 'string' ? e.type : typeof e.status === 'string' ? e.status : undefined;
      return kind ? `${kind}: ${e.message}` : e.message;
    }
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: the raw text is the best excerpt
  }
  return text.trim();
}

function publicUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The provider's id of a request, for support tickets. */
export function requestIdOf(headers: IncomingHttpHeaders): string | undefined {
  return (
    headerValue(headers, 'request-id') ??
    headerValue(headers, 'x-request-id') ??
    headerValue(headers, 'x-goog-request-id')
  );
}

type Internal = typeof import('../../internal.js') & typeof import('../../internal-http.js');
let internalModule: Promise<Internal> | undefined;
/**
 * The HTTP exchange and dispatcher (`utcp-kit/internal/http`, which loads undici) and the deadline helper
 * (`utcp-kit/internal`), on first request.
 */
function loadInternal(): Promise<Internal> {
  internalModule ??= Promise.all([import('../../internal.js'), import('../../internal-http.js')]).then(
    ([light, http]) => ({ ...light, ...http }),
  );
  return internalModule;
}

function mapError(error: unknown, signal: AbortSignal, req: ModelRequest, internal: Internal): unknown {
  if (signal.aborted) return internal.abortError(signal, `${req.provider} request`, req.timeoutMs);
  if (error instanceof UtcpError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = errorMessage(error);
  return new TransportError(
    `${req.provider} request to ${publicUrl(req.url)} failed: ${typeof code === 'string' ? `${code}: ` : ''}${message}`,
    { cause: error },
  );
}

/**
 * @internal The connection pool of one model (docs/design/agent.md#model-requests): the caller's dispatcher when
 * given (never closed here), else one made on first request with `createHttpDispatcher` (the transports' kind:
 * keep-alive, HTTPS_PROXY/HTTP_PROXY/NO_PROXY, loopback always direct) and destroyed by `close()`. A request after
 * `close()` makes a new one. No pool is shared between models.
 */
export interface ModelConnection {
  dispatcher(): Promise<Dispatcher>;
  close(): Promise<void>;
}

export function modelConnection(given?: Dispatcher): ModelConnection {
  if (given) return { dispatcher: async () => given, close: async () => {} };
  let own: Promise<Dispatcher> | undefined;
  return {
    dispatcher() {
      own ??= loadInternal().then((internal) => internal.createHttpDispatcher());
      return own;
    },
    async close() {
      const pending = own;
      own = undefined;
      if (pending) await (await pending).destroy();
    },
  };
}

/** Tracks whether any byte of the body was read, so a failure after output started is not retried. */
function tracked(body: BodyChunks, seen: { bytes: boolean }): BodyChunks {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const chunk of body) {
        seen.bytes = true;
        yield chunk;
      }
    },
  };
}

interface TryFailure {
  error: unknown;
  retryable: boolean;
  /** What the server asked for, in ms. */
  serverDelayMs?: number;
  status?: number;
  requestId?: string;
}

async function tryOnce<T>(
  req: ModelRequest,
  internal: Internal,
  read: (body: BodyChunks, contentType: string, headers: IncomingHttpHeaders) => Promise<T>,
): Promise<{ ok: T } | { failed: TryFailure }> {
  const what = `${req.provider} request`;
  // One deadline per try, body included, linked to the run's signal (docs/design/http-exchange.md#deadlines).
  const deadline = internal.createDeadline(req.signal, req.timeoutMs, what);
  let body: ResponseBody | undefined;
  const seen = { bytes: false };
  try {
    const response = await internal.httpExchange(
      { url: req.url, method: 'POST', headers: req.headers, body: JSON.stringify(req.body) },
      {
        mode: 'stream',
        dispatcher: await req.connection.dispatcher(),
        signal: deadline.signal,
        callerTimeoutMs: req.timeoutMs,
        what,
        // The base URL is the application's own setting: https, or plain http to a loopback address (a local model
        // server or a test replica). Never a remote-sourced request, so loopback is allowed.
        context: `${req.provider} model API URL`,
        remoteSource: false,
        redirect: 'refuse',
      },
    );
    body = response.body;
    const requestId = requestIdOf(response.headers);
    if (response.status < 200 || response.status >= 300) {
      const text = await readBodyText(body, ERROR_EXCERPT_BYTES * 16, 'error body').catch(() => '');
      const error = new ModelApiError(
        req.provider,
        response.status,
        publicUrl(req.url),
        redact(errorExcerpt(text), req.secrets).slice(0, ERROR_EXCERPT_BYTES),
        '',
        { requestId },
      );
      return {
        failed: {
          error,
          retryable: isRetryableStatus(response.status),
          serverDelayMs: serverRetryDelayMs(response.headers, text),
          status: response.status,
          requestId,
        },
      };
    }
    const contentType = (headerValue(response.headers, 'content-type') ?? '').toLowerCase();
    return { ok: await read(tracked(body, seen), contentType, response.headers) };
  } catch (error) {
    const mapped = mapError(error, deadline.signal, req, internal);
    const retryable = !deadline.signal.aborted && !seen.bytes && isConnectionFailure(error);
    return { failed: { error: mapped, retryable } };
  } finally {
    deadline.dispose();
    if (body) internal.destroyBody(body);
  }
}

/**
 * @internal POSTs JSON to a model API and hands the body to `read`. 429, 5xx and connection failures
 * before any byte of output are retried (see ./retry.ts); each retry is reported to `onRetry`.
 * @throws ModelApiError (status, provider request id, attempts) after the last try, UtcpTimeoutError /
 *   UtcpAbortError, TransportError; no error carries a secret.
 */
export async function postModelRequest<T>(
  req: ModelRequest,
  read: (body: BodyChunks, contentType: string, headers: IncomingHttpHeaders) => Promise<T>,
): Promise<T> {
  const policy = retryPolicy(req.retry, req.maxRetries);
  const internal = await loadInternal();
  for (let attempt = 0; ; attempt++) {
    if (req.signal.aborted) throw scrubSecrets(mapError(req.signal.reason, req.signal, req, internal), req.secrets);
    const outcome = await tryOnce(req, internal, read);
    if ('ok' in outcome) return outcome.ok;
    const failure = outcome.failed;
    scrubSecrets(failure.error, req.secrets);
    if (failure.error instanceof ModelApiError) failure.error.attempts = attempt + 1;
    const delayMs = failure.serverDelayMs ?? backoffDelayMs(attempt, policy);
    if (!failure.retryable || attempt >= policy.maxRetries || delayMs > policy.maxDelayMs) throw failure.error;
    req.onRetry?.({
      attempt: attempt + 1,
      maxRetries: policy.maxRetries,
      delayMs,
      ...(failure.status ? { status: failure.status } : {}),
      ...(failure.requestId ? { requestId: failure.requestId } : {}),
      error: failure.error,
    });
    try {
      await policy.sleep(delayMs, req.signal);
    } catch {
      throw scrubSecrets(mapError(req.signal.reason, req.signal, req, internal), req.secrets);
    }
  }
}

/** @internal Reads a successful response body (`contentType` lower-cased). */
export type ReadModelBody<T> = (body: BodyChunks, contentType: string, headers: IncomingHttpHeaders) => Promise<T>;

/** @internal The HTTP side of one model, made once by its adapter (`modelHttp`). */
export interface ModelHttp {
  /** `maxResponseBytes` with its default. */
  readonly maxResponseBytes: number;
  /** Closes the model's own pool (never the caller's dispatcher). */
  close(): Promise<void>;
  /** POSTs one JSON body with the model's settings and the call's signal and `onRetry` (`postModelRequest`). */
  post<T>(body: unknown, call: ChatCallOptions, read: ReadModelBody<T>): Promise<T>;
}

/**
 * @internal What every built-in adapter's requests share (docs/design/agent.md#model-requests): the pool, the JSON
 * and `accept` headers (`text/event-stream` when streaming), the provider's own headers (`auth`: its key header and
 * version headers) before the caller's `headers`, the deadline, the response cap, retries, and the API key kept out
 * of every error.
 */
export function modelHttp(
  provider: string,
  url: URL,
  options: ModelConnectionOptions & { apiKey?: string; stream?: boolean },
  auth: Record<string, string>,
): ModelHttp {
  const connection = modelConnection(options.dispatcher);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: options.stream ? 'text/event-stream' : 'application/json',
    ...auth,
    ...(options.headers ?? {}),
  };
  return {
    maxResponseBytes,
    close: () => connection.close(),
    post: (body, call, read) =>
      postModelRequest(
        {
          provider,
          url,
          headers,
          body,
          signal: call.signal,
          timeoutMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
          secrets: options.apiKey ? [options.apiKey] : [],
          maxResponseBytes,
          connection,
          maxRetries: options.maxRetries,
          retry: options.retry,
          onRetry: call.onRetry,
        },
        read,
      ),
  };
}
