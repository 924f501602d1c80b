import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/server/stdio.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { UtcpError } from '../index.js';

/** The MCP SDK modules the bridge needs, loaded on first use. */
export interface McpServerSdk {
  Server: typeof ServerModule.Server;
  types: typeof TypesModule;
}

function missing(cause: unknown): UtcpError {
  return new UtcpError(
    'DEPENDENCY_MISSING',
    'The MCP bridge needs @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
    { cause },
  );
}

/** @throws UtcpError DEPENDENCY_MISSING when the SDK cannot be imported. */
export async function loadMcpServerSdk(): Promise<McpServerSdk> {
  try {
    const [server, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return { Server: server.Server, types };
  } catch (cause) {
    throw missing(cause);
  }
}

/** @throws UtcpError DEPENDENCY_MISSING */
export async function loadStdioServerTransport(): Promise<typeof StdioModule.StdioServerTransport> {
  try {
    return (await import('@modelcontextprotocol/sdk/server/stdio.js')).StdioServerTransport;
  } catch (cause) {
    throw missing(cause);
  }
}

/** @throws UtcpError DEPENDENCY_MISSING */
export async function loadStreamableHttpServerTransport(): Promise<typeof HttpModule.StreamableHTTPServerTransport> {
  try {
    return (await import('@modelcontextprotocol/sdk/server/streamableHttp.js')).StreamableHTTPServerTransport;
  } catch (cause) {
    throw missing(cause);
  }
}
