import type * as ClientModule from '@modelcontextprotocol/client';
import type * as StdioModule from '@modelcontextprotocol/client/stdio';
import { UtcpError } from '../../core/errors.js';

/** The parts of the MCP client SDK (v2, `@modelcontextprotocol/client`) this transport uses, loaded on first use. */
export interface McpSdk {
  Client: typeof ClientModule.Client;
  StreamableHTTPClientTransport: typeof ClientModule.StreamableHTTPClientTransport;
  SSEClientTransport: typeof ClientModule.SSEClientTransport;
  /** The SDK's own stdio transport, used on Windows only (it resolves `.cmd` shims). */
  loadStdioClientTransport(): Promise<typeof StdioModule.StdioClientTransport>;
  deserializeMessage: typeof ClientModule.deserializeMessage;
  serializeMessage: typeof ClientModule.serializeMessage;
  /** Validates an already parsed JSON-RPC message (the SDK's schema; throws on anything else). */
  parseJSONRPCMessage: typeof ClientModule.parseJSONRPCMessage;
  /** The SDK's public `CallToolResult` schema, passed to `request()` so the SDK skips its per-call schema lookup. */
  callToolResultSchema: (typeof ClientModule.specTypeSchemas)['CallToolResult'];
  ProtocolError: typeof ClientModule.ProtocolError;
  SdkError: typeof ClientModule.SdkError;
  SdkHttpError: typeof ClientModule.SdkHttpError;
  SseError: typeof ClientModule.SseError;
  SdkErrorCode: typeof ClientModule.SdkErrorCode;
}

/**
 * Imports `@modelcontextprotocol/client` (client, HTTP transports, errors).
 * @throws UtcpError DEPENDENCY_MISSING when the package cannot be loaded.
 */
export async function loadMcpSdk(): Promise<McpSdk> {
  try {
    const sdk = await import('@modelcontextprotocol/client');
    return {
      Client: sdk.Client,
      StreamableHTTPClientTransport: sdk.StreamableHTTPClientTransport,
      SSEClientTransport: sdk.SSEClientTransport,
      loadStdioClientTransport: async () => (await import('@modelcontextprotocol/client/stdio')).StdioClientTransport,
      deserializeMessage: sdk.deserializeMessage,
      serializeMessage: sdk.serializeMessage,
      parseJSONRPCMessage: sdk.parseJSONRPCMessage,
      callToolResultSchema: sdk.specTypeSchemas.CallToolResult,
      ProtocolError: sdk.ProtocolError,
      SdkError: sdk.SdkError,
      SdkHttpError: sdk.SdkHttpError,
      SseError: sdk.SseError,
      SdkErrorCode: sdk.SdkErrorCode,
    };
  } catch (cause) {
    throw new UtcpError(
      'DEPENDENCY_MISSING',
      'The mcp transport needs @modelcontextprotocol/client: npm install @modelcontextprotocol/client',
      { cause },
    );
  }
}
