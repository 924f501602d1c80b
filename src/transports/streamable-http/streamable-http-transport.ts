/**
 * The `streamable_http` transport (docs/design/transports.md#streamable-http): chunked HTTP responses streamed as NDJSON
 * lines, JSON values, SSE events or byte chunks.
 */
import { UtcpError } from '../../core/errors.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { StreamableHttpCallTemplate } from './template.js';
import { concatBytes } from '../../http/http-body.js';
import { discoverHttpManual } from '../shared/http-discovery.js';
import { streamHttpItems } from './stream-http-items.js';

export class StreamableHttpTransport implements Transport<StreamableHttpCallTemplate> {
  readonly type = 'streamable_http';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  registerManual(template: StreamableHttpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    return discoverHttpManual(template, this.#ctx, options, {
      label: 'Streamable HTTP',
      method: template.http_method ?? 'GET',
      allowOpenApi: false,
    });
  }

  /**
   * All items, bounded by `max_response_bytes`: one `Uint8Array` when any item is bytes,
   * otherwise the array of items (a plain JSON response gives `[value]`).
   */
  async callTool(
    tool: Tool,
    args: JsonObject,
    template: StreamableHttpCallTemplate,
    options: CallOptions,
  ): Promise<unknown> {
    const items: unknown[] = [];
    let total = 0;
    for await (const { item, bytes } of streamHttpItems(tool, args, template, this.#ctx, options)) {
      total += bytes;
      if (total > this.#ctx.limits.max_response_bytes) {
        throw new UtcpError(
          'RESPONSE_TOO_LARGE',
          `Streamable HTTP call of tool ${tool.name}: the response exceeds the ${this.#ctx.limits.max_response_bytes}-byte limit`,
        );
      }
      items.push(item);
    }
    const byteItems = items.filter((i): i is Uint8Array => i instanceof Uint8Array);
    return byteItems.length > 0 ? concatBytes(byteItems) : items;
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: StreamableHttpCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown, void, undefined> {
    for await (const { item } of streamHttpItems(tool, args, template, this.#ctx, options)) yield item;
  }

  async deregisterManual(): Promise<void> {}

  async close(): Promise<void> {}
}
