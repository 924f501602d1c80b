/**
 * The `http` transport (docs/design/transports.md#http): discovery of UTCP manuals and OpenAPI specs,
 * and tool calls on the client's shared undici dispatcher.
 */
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { HttpCallTemplate } from './template.js';
import { discoverHttpManual } from '../shared/http-discovery.js';
import { callHttpTool } from './call-http-tool.js';

/** Creates the `http` transport for one client. */
export function createHttpTransport(ctx: TransportContext): Transport<HttpCallTemplate> {
  return {
    type: 'http',
    registerManual(template: HttpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
      return discoverHttpManual(template, ctx, options, {
        label: 'HTTP',
        method: template.http_method ?? 'GET',
        allowOpenApi: true,
      });
    },
    callTool(tool: Tool, args: JsonObject, template: HttpCallTemplate, options: CallOptions): Promise<unknown> {
      return callHttpTool(tool, args, template, ctx, options);
    },
    async deregisterManual(): Promise<void> {},
    async close(): Promise<void> {},
  };
}
