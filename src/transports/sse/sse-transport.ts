/**
 * The `sse` transport (docs/design/transports.md#sse): server-sent event streams, parsed incrementally and
 * yielded as they arrive, with reconnection for GET streams.
 */
import { UtcpError } from '../../core/errors.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { SseCallTemplate } from './template.js';
import { discoverHttpManual } from '../shared/http-discovery.js';
import { streamSseEvents } from './stream-sse-events.js';

export class SseTransport implements Transport<SseCallTemplate> {
  readonly type = 'sse';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  registerManual(template: SseCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    return discoverHttpManual(template, this.#ctx, options, { label: 'SSE', method: 'GET', allowOpenApi: false });
  }

  /** All items of the stream, bounded by `max_response_bytes` of event data. */
  async callTool(tool: Tool, args: JsonObject, template: SseCallTemplate, options: CallOptions): Promise<unknown[]> {
    const items: unknown[] = [];
    let total = 0;
    for await (const { item, bytes } of streamSseEvents(tool, args, template, this.#ctx, options)) {
      total += bytes;
      if (total > this.#ctx.limits.max_response_bytes) {
        throw new UtcpError(
          'RESPONSE_TOO_LARGE',
          `SSE call of tool ${tool.name}: events exceed the ${this.#ctx.limits.max_response_bytes}-byte response limit`,
        );
      }
      items.push(item);
    }
    return items;
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: SseCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown, void, undefined> {
    for await (const { item } of streamSseEvents(tool, args, template, this.#ctx, options)) yield item;
  }

  async deregisterManual(): Promise<void> {}

  async close(): Promise<void> {}
}
