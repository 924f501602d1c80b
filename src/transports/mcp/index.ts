import type { Transport, TransportContext } from '../../core/transport.js';
import type { McpCallTemplate } from './template.js';
import { McpTransport } from './mcp-transport.js';

export { McpTransport } from './mcp-transport.js';
export { McpServerError } from './mcp-server-error.js';

/** Creates the `mcp` transport of one client (the MCP SDK is loaded on first use). */
export function createMcpTransport(ctx: TransportContext): Transport<McpCallTemplate> {
  return new McpTransport(ctx);
}
