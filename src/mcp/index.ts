/**
 * utcp-kit/mcp: serve a UtcpClient's tools to any MCP host (stdio or streamable HTTP).
 * The MCP SDK is imported on first use. Every name exported here is public API.
 */
export { serveMcp, encodeMcpToolName } from './serve-mcp.js';
export type {
  ServeMcpOptions,
  McpBridgeHandle,
  McpBridgeTransportOptions,
  McpStdioTransportOptions,
  McpHttpTransportOptions,
  McpBridgeClient,
  McpToolFilter,
  McpHttpAuth,
} from './serve-mcp.js';
