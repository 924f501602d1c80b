import type * as ServerModule from '@modelcontextprotocol/server';
import type * as StdioModule from '@modelcontextprotocol/server/stdio';
import { UtcpError } from '../index.js';

/** The MCP server SDK (v2, `@modelcontextprotocol/server`) parts the bridge needs, loaded on first use. */
export interface McpServerSdk {
  Server: typeof ServerModule.Server;
  ProtocolError: typeof ServerModule.ProtocolError;
  ProtocolErrorCode: typeof ServerModule.ProtocolErrorCode;
  /** The 2025-era revisions the SDK negotiates through `initialize`. */
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
  createMcpHandler: typeof ServerModule.createMcpHandler;
  isLegacyRequest: typeof ServerModule.isLegacyRequest;
  WebStandardStreamableHTTPServerTransport: typeof ServerModule.WebStandardStreamableHTTPServerTransport;
}

function missing(cause: unknown): UtcpError {
  return new UtcpError(
    'DEPENDENCY_MISSING',
    'The MCP bridge needs @modelcontextprotocol/server: npm install @modelcontextprotocol/server',
    { cause },
  );
}

/** @throws UtcpError DEPENDENCY_MISSING when the SDK cannot be imported. */
export async function loadMcpServerSdk(): Promise<McpServerSdk> {
  try {
    const sdk = await import('@modelcontextprotocol/server');
    return {
      Server: sdk.Server,
      ProtocolError: sdk.ProtocolError,
      ProtocolErrorCode: sdk.ProtocolErrorCode,
      SUPPORTED_PROTOCOL_VERSIONS: sdk.SUPPORTED_PROTOCOL_VERSIONS,
      createMcpHandler: sdk.createMcpHandler,
      isLegacyRequest: sdk.isLegacyRequest,
      WebStandardStreamableHTTPServerTransport: sdk.WebStandardStreamableHTTPServerTransport,
    };
  } catch (cause) {
    throw missing(cause);
  }
}

/** @throws UtcpError DEPENDENCY_MISSING */
export async function loadStdioServer(): Promise<Pick<typeof StdioModule, 'serveStdio' | 'StdioServerTransport'>> {
  try {
    const stdio = await import('@modelcontextprotocol/server/stdio');
    return { serveStdio: stdio.serveStdio, StdioServerTransport: stdio.StdioServerTransport };
  } catch (cause) {
    throw missing(cause);
  }
}
