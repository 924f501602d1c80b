import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as StreamableHttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as SseModule from '@modelcontextprotocol/sdk/client/sse.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as SharedStdioModule from '@modelcontextprotocol/sdk/shared/stdio.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import { UtcpError } from '../../core/errors.js';

/** The parts of the MCP SDK this transport uses, loaded on first use. */
export interface McpSdk {
  Client: typeof ClientModule.Client;
  StreamableHTTPClientTransport: typeof StreamableHttpModule.StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHttpModule.StreamableHTTPError;
  SSEClientTransport: typeof SseModule.SSEClientTransport;
  /** The SDK's own stdio transport, used on Windows only (it resolves `.cmd` shims). */
  loadStdioClientTransport(): Promise<typeof StdioModule.StdioClientTransport>;
  ReadBuffer: typeof SharedStdioModule.ReadBuffer;
  serializeMessage: typeof SharedStdioModule.serializeMessage;
  types: Pick<
    typeof TypesModule,
    | 'CallToolResultSchema'
    | 'ListToolsResultSchema'
    | 'ListResourcesResultSchema'
    | 'ReadResourceResultSchema'
    | 'ToolListChangedNotificationSchema'
    | 'McpError'
    | 'ErrorCode'
  >;
}

/**
 * Imports `@modelcontextprotocol/sdk` (client, transports, schemas).
 * @throws UtcpError DEPENDENCY_MISSING when the package cannot be loaded.
 */
export async function loadMcpSdk(): Promise<McpSdk> {
  try {
    const [client, streamable, sse, sharedStdio, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
      import('@modelcontextprotocol/sdk/shared/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return {
      Client: client.Client,
      StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
      StreamableHTTPError: streamable.StreamableHTTPError,
      SSEClientTransport: sse.SSEClientTransport,
      loadStdioClientTransport: async () => (await import('@modelcontextprotocol/sdk/client/stdio.js')).StdioClientTransport,
      ReadBuffer: sharedStdio.ReadBuffer,
      serializeMessage: sharedStdio.serializeMessage,
      types,
    };
  } catch (cause) {
    throw new UtcpError(
      'DEPENDENCY_MISSING',
      'The mcp transport needs @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
      { cause },
    );
  }
}
