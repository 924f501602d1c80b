import { TransportError, UtcpError, UtcpTimeoutError } from '../../core/errors.js';
import { abortError, createDeadline, idleTimer, MAX_TIMER_MS, sleep } from '../../core/deadline.js';
import type { CallOptions, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { SseCallTemplate } from './template.js';
import { EventStreamDecoder, eventItem } from '../../http/http-event-stream.js';
import { openStreamingResponse } from '../../http/http-open-stream.js';
import { buildHttpRequest, HeaderBag, type HttpRequestSpec } from '../../http/http-request.js';
import type { StreamedHttpResponse as HttpResponse } from '../../http/http-exchange.js';
import { destroyBody } from '../../http/http-body.js';
import { streamCutOff } from '../shared/stream-end.js';
import { errorMessage } from '../../core/guards.js';

/** Deadline until the response headers arrive, in ms; the stream itself is open-ended. */
export const SSE_HEADERS_TIMEOUT_MS = 30_000;
/** Reconnect delay when the server sent no `retry`, in ms. */
export const SSE_DEFAULT_RETRY_MS = 1_000;
/** Total reconnect budget when the template sets no `retry_timeout`, in ms. */
export const SSE_DEFAULT_RETRY_TIMEOUT_MS = 30_000;

/** One yielded item and the size of its event data, for aggregate limits. */
export interface SseItem {
  item: unknown;
  bytes: number;
}

function withHeaders(spec: HttpRequestSpec, extra: Record<string, string>): HttpRequestSpec {
  const bag = new HeaderBag();
  for (const [k, v] of Object.entries(spec.headers)) bag.set(k, v);
  for (const [k, v] of Object.entries(extra)) bag.set(bag.nameOf(k), v);
  return { ...spec, headers: bag.toObject() };
}

/**
 * Streams an `sse` tool call (docs/design/transports.md#sse): POST when a body argument is present, else GET;
 * each event yielded as it arrives (filtered by `event_type`); GET streams reconnect after network
 * errors with `Last-Event-ID`, waiting the server's `retry`, within `retry_timeout`.
 * Stopping iteration cancels the request.
 */
export async function* streamSseEvents(
  tool: Tool,
  args: JsonObject,
  template: SseCallTemplate,
  ctx: TransportContext,
  options: CallOptions,
): AsyncGenerator<SseItem, void, undefined> {
  const what = `SSE call of tool ${tool.name}`;
  // One scope for the whole stream: the caller's signal, and `abort()` when the consumer stops.
  const stop = createDeadline(options.signal, undefined, what);
  const signal = stop.signal;
  const decoder = new EventStreamDecoder(ctx.limits.max_stream_item_bytes, what);
  const retryTimeoutMs = template.retry_timeout ?? SSE_DEFAULT_RETRY_TIMEOUT_MS;
  let hasBody = false;

  const open = async (): Promise<HttpResponse> =>
    openStreamingResponse(
      async () => {
        const spec = await buildHttpRequest(template, args, ctx, {
          method: (body) => (body ? 'POST' : 'GET'),
          contentType: 'application/json',
          defaultBodyField: null,
          signal,
          remoteSource: options.remoteSource,
          inputs: tool.inputs,
        });
        hasBody = spec.body !== undefined;
        const extra: Record<string, string> = { Accept: 'text/event-stream' };
        if (decoder.lastEventId) extra['Last-Event-ID'] = decoder.lastEventId;
        return withHeaders(spec, extra);
      },
      ctx,
      {
        signal,
        what,
        auth: template.auth,
        headersTimeoutMs: SSE_HEADERS_TIMEOUT_MS,
        timeoutMs: options.timeoutMs,
        remoteSource: options.remoteSource,
      },
    );

  // Idle timeout: a stream that delivers no event (heartbeats and filtered-out events do not count) for
  // limits.stream_idle_timeout_ms fails with a timeout (docs/design/threat-model.md#stream-idle).
  const idleMs = ctx.limits.stream_idle_timeout_ms;
  // Past Node's timer range (about 24.8 days) there is no idle timeout: such a timer would fire after 1 ms.
  const idle = idleTimer(idleMs, () =>
    stop.abort(new UtcpTimeoutError(`${what} (no event for ${idleMs} ms; limits.stream_idle_timeout_ms)`, idleMs)),
  );

  let response: HttpResponse | undefined;
  try {
    idle.restart();
    response = await open();
    let failedAt: number | undefined;
    for (;;) {
      let cut: Error | undefined;
      try {
        for await (const chunk of response.body) {
          for (const event of decoder.push(chunk)) {
            failedAt = undefined;
            if (template.event_type && event.type !== template.event_type) continue;
            idle.pause(); // the consumer's time between items is not the server's idleness
            yield { item: eventItem(event), bytes: Buffer.byteLength(event.data, 'utf8') };
            idle.restart();
          }
          decoder.throwIfFailed();
        }
      } catch (error) {
        if (signal.aborted) throw abortError(signal, what, options.timeoutMs);
        if (error instanceof UtcpError) throw error;
        const reason = (error as { code?: string })?.code ?? errorMessage(error);
        cut = streamCutOff(what, `: the connection failed before the response ended (${reason})`, {
          code: 'TRANSPORT_FAILED',
          cause: error,
        });
      }
      // The body ended: cleanly, unless it stopped inside an event (docs/design/transports.md#cut-off-streams).
      if (!cut && decoder.endedMidEvent()) {
        cut = streamCutOff(what, 'in the middle of an event (the body ended before the blank line that completes it)');
      }
      if (cut) {
        const failure = cut;
        if (template.reconnect === false || hasBody) throw failure;
        failedAt ??= Date.now();
        destroyBody(response.body);
        response = await reconnect(failure, failedAt);
        continue;
      }
      return;
    }
  } finally {
    idle.pause();
    stop.abort();
    destroyBody(response?.body);
  }

  async function reconnect(failure: Error, failedAt: number): Promise<HttpResponse> {
    let last = failure;
    for (;;) {
      // A server's `retry` past Node's timer range would make the wait end after 1 ms (a reconnect loop).
      const delayMs = Math.min(decoder.retryMs ?? SSE_DEFAULT_RETRY_MS, MAX_TIMER_MS);
      if (Date.now() + delayMs - failedAt > retryTimeoutMs) {
        throw new TransportError(`${what}: the stream failed and reconnecting gave up after ${retryTimeoutMs} ms`, {
          cause: last,
        });
      }
      ctx.logger.debug?.(`${what}: reconnecting in ${delayMs} ms`);
      try {
        await sleep(delayMs, signal);
      } catch {
        throw abortError(signal, what, options.timeoutMs);
      }
      decoder.reset();
      try {
        return await open();
      } catch (error) {
        if (signal.aborted) throw abortError(signal, what, options.timeoutMs);
        const retryable = error instanceof UtcpError && (error.code === 'TRANSPORT_FAILED' || error.code === 'TIMEOUT');
        if (!retryable) throw error;
        last = error;
      }
    }
  }
}
