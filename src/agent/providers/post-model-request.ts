import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request, type Dispatcher } from 'undici';
import { TransportError, UtcpAbortError, UtcpError, UtcpTimeoutError } from '../../index.js';
import { ModelApiError } from './model-api-error.js';

type ResponseBody = Dispatcher.ResponseData['body'];

/** @internal One POST to a model API. */
export interface ModelRequest {
  provider: string;
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  /** The caller's signal. */
  signal: AbortSignal;
  /** Deadline for the whole exchange, body included. */
  timeoutMs: number;
  /** Strings cut out of error excerpts (API keys). */
  secrets: readonly string[];
  maxResponseBytes: number;
  dispatcher?: Dispatcher;
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
export async function readBodyText(body: ResponseBody, maxBytes: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new UtcpError('RESPONSE_TOO_LARGE', `${what} is larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** @internal Reads a JSON body. */
export async function readBodyJson(body: ResponseBody, maxBytes: number, what: string): Promise<unknown> {
  const text = await readBodyText(body, maxBytes, what);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new UtcpError('PROTOCOL_ERROR', `${what} is not valid JSON`, { cause });
  }
}

/** @internal The server-sent events of a streaming body, decoded incrementally. */
export async function* readSseEvents(body: ResponseBody): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
  parser.feed(decoder.decode());
  parser.reset({ consume: true });
  while (queue.length > 0) yield queue.shift()!;
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/** The provider's own error message when the body is the usual `{ error: { message } }`, else the raw text. */
function errorExcerpt(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
    const e = parsed.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return typeof e.type === 'string' ? `${e.type}: ${e.message}` : e.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: the raw text is the best excerpt
  }
  return text.trim();
}

function publicUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function mapError(error: unknown, signal: AbortSignal, req: ModelRequest): unknown {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof UtcpError) return reason;
    return new UtcpAbortError(`${req.provider} request`, { cause: reason });
  }
  if (error instanceof UtcpError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TransportError(`${req.provider} request to ${publicUrl(req.url)} failed: ${redact(message, req.secrets)}`, { cause: error });
}

/**
 * @internal POSTs JSON to a model API and hands the body to `read` under one deadline.
 * @throws ModelApiError on a non-2xx status, UtcpTimeoutError / UtcpAbortError, TransportError.
 */
export async function postModelRequest<T>(req: ModelRequest, read: (body: ResponseBody, contentType: string) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new UtcpTimeoutError(`${req.provider} request`, req.timeoutMs)), req.timeoutMs);
  const signal = AbortSignal.any([req.signal, deadline.signal]);
  let body: ResponseBody | undefined;
  try {
    const response = await request(req.url, {
      method: 'POST',
      headers: req.headers,
      body: JSON.stringify(req.body),
      signal,
      dispatcher: req.dispatcher,
    });
    body = response.body;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const text = await readBodyText(body, ERROR_EXCERPT_BYTES * 16, 'error body').catch(() => '');
      throw new ModelApiError(req.provider, response.statusCode, publicUrl(req.url), redact(errorExcerpt(text), req.secrets).slice(0, ERROR_EXCERPT_BYTES));
    }
    const contentType = response.headers['content-type'];
    return await read(body, (Array.isArray(contentType) ? contentType[0] : contentType ?? '').toLowerCase());
  } catch (error) {
    throw mapError(error, signal, req);
  } finally {
    clearTimeout(timer);
    body?.destroy();
  }
}
