import { TransportError, UtcpError } from '../../core/errors.js';
import { abortError, createDeadline } from '../../core/deadline.js';
import type { CallOptions, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { StreamableHttpCallTemplate } from './template.js';
import {
  concatBytes,
  destroyBody,
  decodeResponseBody,
  headerValue,
  mediaType,
  readBodyCapped,
  utf8,
  type ResponseBody,
} from '../../http/http-body.js';
import { EventStreamDecoder, eventItem } from '../../http/http-event-stream.js';
import { openStreamingResponse } from '../../http/http-open-stream.js';
import { buildHttpRequest } from '../../http/http-request.js';
import { isCompleteLastLine, streamCutOff } from '../shared/stream-end.js';
import type { StreamedHttpResponse as HttpResponse } from '../../http/http-exchange.js';
import { errorMessage } from '../../core/guards.js';

/** Whole-request deadline when the template sets no `timeout`, in ms. */
export const DEFAULT_STREAMABLE_TIMEOUT_MS = 60_000;
/** Byte chunk size when the template sets none, and when it sets 0. */
export const DEFAULT_CHUNK_SIZE = 4096;
export const ZERO_CHUNK_SIZE = 8192;

const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl']);

/** One yielded item and its size in bytes, for aggregate limits. */
export interface StreamItem {
  item: unknown;
  bytes: number;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return line;
  }
}

/** One item per non-blank line, as lines complete; a line above `maxLineBytes` fails. */
async function* ndjsonItems(body: ResponseBody, maxLineBytes: number, what: string): AsyncGenerator<StreamItem> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const emit = (parts: Uint8Array[], total: number): StreamItem | undefined => {
    let text = utf8(concatBytes(parts, total));
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return undefined;
    return { item: parseLine(text), bytes: total };
  };
  const tooLarge = () =>
    new UtcpError('RESPONSE_TOO_LARGE', `${what}: a line is larger than the ${maxLineBytes}-byte stream item limit`);
  for await (const chunk of body) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const part = chunk.subarray(start, nl);
      const total = pendingBytes + part.byteLength;
      if (total > maxLineBytes) throw tooLarge();
      const item = emit([...pending, part], total);
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
      if (item) yield item;
    }
    if (start < chunk.byteLength) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.byteLength - start;
      if (pendingBytes > maxLineBytes) throw tooLarge();
    }
  }
  // A last line without its newline counts only when it is a whole JSON value (docs/design/transports.md#cut-off-streams).
  if (pendingBytes > 0 && !isCompleteLastLine(utf8(concatBytes(pending, pendingBytes)))) {
    throw streamCutOff(what, 'in the middle of a line (the body ended without the newline that completes it)');
  }
  const last = emit(pending, pendingBytes);
  if (last) yield last;
}

/** Byte chunks of exactly `size` bytes (the last one may be shorter). */
async function* byteChunks(body: ResponseBody, size: number): AsyncGenerator<StreamItem> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const chunk of body) {
    let data = chunk;
    while (pendingBytes + data.byteLength >= size) {
      const take = size - pendingBytes;
      const out = concatBytes([...pending, data.subarray(0, take)], size);
      pending = [];
      pendingBytes = 0;
      data = data.subarray(take);
      yield { item: out, bytes: size };
    }
    if (data.byteLength > 0) {
      pending.push(Uint8Array.from(data));
      pendingBytes += data.byteLength;
    }
  }
  if (pendingBytes > 0) yield { item: concatBytes(pending, pendingBytes), bytes: pendingBytes };
}

async function* sseItems(body: ResponseBody, maxItemBytes: number, what: string): AsyncGenerator<StreamItem> {
  const decoder = new EventStreamDecoder(maxItemBytes, what);
  for await (const chunk of body) {
    for (const event of decoder.push(chunk))
      yield { item: eventItem(event), bytes: Buffer.byteLength(event.data, 'utf8') };
    decoder.throwIfFailed();
  }
  if (decoder.endedMidEvent()) {
    throw streamCutOff(what, 'in the middle of an event (the body ended before the blank line that completes it)');
  }
}

/**
 * Streams a `streamable_http` call (docs/design/transports.md#streamable-http): items by media type (NDJSON lines, one JSON
 * value, SSE events, or byte chunks of `chunk_size`), as they arrive. Redirects are refused; the
 * template `timeout` covers the whole request including the body. Stopping iteration cancels the request.
 */
export async function* streamHttpItems(
  tool: Tool,
  args: JsonObject,
  template: StreamableHttpCallTemplate,
  ctx: TransportContext,
  options: CallOptions,
): AsyncGenerator<StreamItem, void, undefined> {
  const what = `Streamable HTTP call of tool ${tool.name}`;
  const deadline = createDeadline(options.signal, template.timeout ?? DEFAULT_STREAMABLE_TIMEOUT_MS, what);
  const signal = deadline.signal;
  let response: HttpResponse | undefined;
  try {
    response = await openStreamingResponse(
      () =>
        buildHttpRequest(template, args, ctx, {
          method: template.http_method ?? 'GET',
          contentType: template.content_type ?? 'application/octet-stream',
          defaultBodyField: null,
          signal,
          remoteSource: options.remoteSource,
          inputs: tool.inputs,
        }),
      ctx,
      { signal, what, auth: template.auth, timeoutMs: options.timeoutMs, remoteSource: options.remoteSource },
    );
    const contentType = headerValue(response.headers, 'content-type');
    const type = mediaType(contentType);
    const itemLimit = ctx.limits.max_stream_item_bytes;
    if (NDJSON_TYPES.has(type)) {
      yield* ndjsonItems(response.body, itemLimit, what);
    } else if (type === 'application/json') {
      const bytes = await readBodyCapped(response.body, response.headers, ctx.limits.max_response_bytes, what);
      yield { item: decodeResponseBody(bytes, contentType), bytes: bytes.byteLength };
    } else if (type === 'text/event-stream') {
      yield* sseItems(response.body, itemLimit, what);
    } else {
      const size =
        template.chunk_size === undefined || template.chunk_size === null
          ? DEFAULT_CHUNK_SIZE
          : template.chunk_size > 0
            ? template.chunk_size
            : ZERO_CHUNK_SIZE;
      yield* byteChunks(response.body, size);
    }
  } catch (error) {
    if (signal.aborted) throw abortError(signal, what, options.timeoutMs);
    if (error instanceof UtcpError) throw error;
    throw networkErrorFor(error, what, response);
  } finally {
    deadline.abort();
    destroyBody(response?.body);
  }
}

function networkErrorFor(error: unknown, what: string, response: HttpResponse | undefined): Error {
  const reason = (error as { code?: string })?.code ?? errorMessage(error);
  if (response) {
    // The body did not reach its end (the terminating chunk, or Content-Length bytes).
    return streamCutOff(what, `: the connection failed before the response ended (${reason})`, {
      code: 'TRANSPORT_FAILED',
      cause: error,
    });
  }
  return new TransportError(`${what}: the response stream failed before the response (${reason})`, { cause: error });
}
