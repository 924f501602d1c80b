/**
 * The built-in transports, by call_template_type. Each module is imported on first use,
 * so `import 'utcp-kit'` loads none of them.
 */
import type { TransportFactory } from '../core/transport.js';

export const builtinTransports: Record<string, TransportFactory> = {
  http: async (ctx) => (await import('./http/index.js')).createHttpTransport(ctx),
  sse: async (ctx) => (await import('./sse/index.js')).createSseTransport(ctx),
  streamable_http: async (ctx) => (await import('./streamable-http/index.js')).createStreamableHttpTransport(ctx),
  cli: async (ctx) => (await import('./cli/index.js')).createCliTransport(ctx),
  mcp: async (ctx) => (await import('./mcp/index.js')).createMcpTransport(ctx),
  text: async (ctx) => (await import('./text/index.js')).createTextTransport(ctx),
  file: async (ctx) => (await import('./file/index.js')).createFileTransport(ctx),
  direct: async (ctx) => (await import('./direct/index.js')).createDirectTransport(ctx),
  websocket: async (ctx) => (await import('./websocket/index.js')).createWebSocketTransport(ctx),
  tcp: async (ctx) => (await import('./tcp/index.js')).createTcpTransport(ctx),
  udp: async (ctx) => (await import('./udp/index.js')).createUdpTransport(ctx),
  graphql: async (ctx) => (await import('./graphql/index.js')).createGraphqlTransport(ctx),
  grpc: async (ctx) => (await import('./grpc/index.js')).createGrpcTransport(ctx),
};
