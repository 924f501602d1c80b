/**
 * The `http` transport (docs/design/transports.md#http): discovery of UTCP manuals and OpenAPI specs,
 * and tool calls on the client's shared undici dispatcher.
 */
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { HttpCallTemplate } from './template.js';
import { discoverHttpManual } from '../shared/http-discovery.js';
import { callHttpTool } from './call-http-tool.js';

export class HttpTransport implements Transport<HttpCallTemplate> {
  readonly type = 'http';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  registerManual(template: HttpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    return discoverHttpManual(template, this.#ctx, options, {
      label: 'HTTP',
      method: template.http_method ?? 'GET',
      allowOpenApi: true,
    });
  }

  callTool(tool: Tool, args: JsonObject, template: HttpCallTemplate, options: CallOptions): Promise<unknown> {
    return callHttpTool(tool, args, template, this.#ctx, options);
  }

  async deregisterManual(): Promise<void> {}

  async close(): Promise<void> {}
}
