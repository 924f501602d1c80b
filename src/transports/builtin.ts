/**
 * The built-in transports, one line each: where the template spec lives (`<type>/template.ts`), how the transport
 * is created, and the type's legacy v0.1 names. Both modules are imported on first use, so `import 'utcp-kit'`
 * loads none of them. Adding a transport: docs/design/adding-a-transport.md.
 */
import { existsSync } from 'node:fs';
import type { CallTemplateSpec, TemplateOf } from '../core/template.js';
import type { PrecompiledTemplate, Transport, TransportContext, TransportDefinition } from '../core/transport.js';
import type { CallTemplateBase } from '../core/types.js';

function builtin<T extends CallTemplateBase>(
  spec: () => Promise<{ template: CallTemplateSpec<T> }>,
  create: (ctx: TransportContext) => Promise<Transport<NoInfer<T>>>,
  legacyTypes?: readonly string[],
): TransportDefinition<T> {
  return {
    template: async () => (await spec()).template,
    // Written by the build (scripts/precompile-templates.mjs) next to this module, one file per type; a source
    // checkout has none, and the template is then compiled at run time (docs/design/performance.md#precompiled-templates).
    precompiledTemplate: async () => {
      const file = new URL(`./precompiled/${(await spec()).template.type}.js`, import.meta.url);
      if (!existsSync(file)) return undefined;
      return (await import(/* @vite-ignore */ file.href)) as PrecompiledTemplate;
    },
    create,
    legacyTypes,
  };
}

/**
 * The transports whose protocol library is an optional peer dependency load it in `create`, so registering a manual
 * of their type without the library fails at once with DEPENDENCY_MISSING naming the `npm install` command
 * (docs/design/packaging.md#missing-library).
 */
export const builtinTransports = {
  http: builtin(
    () => import('./http/template.js'),
    async (ctx) => (await import('./http/index.js')).createHttpTransport(ctx),
  ),
  sse: builtin(
    () => import('./sse/template.js'),
    async (ctx) => (await import('./sse/index.js')).createSseTransport(ctx),
    ['http_sse'],
  ),
  streamable_http: builtin(
    () => import('./streamable-http/template.js'),
    async (ctx) => (await import('./streamable-http/index.js')).createStreamableHttpTransport(ctx),
    ['http_stream', 'http_ndjson', 'http_octet_stream'],
  ),
  cli: builtin(
    () => import('./cli/template.js'),
    async (ctx) => (await import('./cli/index.js')).createCliTransport(ctx),
  ),
  mcp: builtin(
    () => import('./mcp/template.js'),
    async (ctx) => {
      await (await import('./mcp/load-mcp-sdk.js')).loadMcpSdk();
      return (await import('./mcp/index.js')).createMcpTransport(ctx);
    },
  ),
  text: builtin(
    () => import('./text/template.js'),
    async (ctx) => (await import('./text/index.js')).createTextTransport(ctx),
  ),
  file: builtin(
    () => import('./file/template.js'),
    async (ctx) => (await import('./file/index.js')).createFileTransport(ctx),
  ),
  direct: builtin(
    () => import('./direct/template.js'),
    async (ctx) => (await import('./direct/index.js')).createDirectTransport(ctx),
  ),
  websocket: builtin(
    () => import('./websocket/template.js'),
    async (ctx) => {
      await (await import('./websocket/load-ws.js')).loadWs();
      return (await import('./websocket/index.js')).createWebSocketTransport(ctx);
    },
  ),
  tcp: builtin(
    () => import('./tcp/template.js'),
    async (ctx) => (await import('./tcp/index.js')).createTcpTransport(ctx),
  ),
  udp: builtin(
    () => import('./udp/template.js'),
    async (ctx) => (await import('./udp/index.js')).createUdpTransport(ctx),
  ),
  graphql: builtin(
    () => import('./graphql/template.js'),
    async (ctx) => {
      await (await import('./graphql/load-modules.js')).loadGraphqlParser();
      return (await import('./graphql/index.js')).createGraphqlTransport(ctx);
    },
  ),
  grpc: builtin(
    () => import('./grpc/template.js'),
    async (ctx) => {
      await (await import('./grpc/load-grpc.js')).loadGrpcModules();
      return (await import('./grpc/index.js')).createGrpcTransport(ctx);
    },
  ),
};

/** Every built-in call template type. */
export type BuiltinCallTemplateType = keyof typeof builtinTransports;

/** The call template of any built-in type (a union discriminated by `call_template_type`). */
export type CallTemplate = {
  [K in BuiltinCallTemplateType]: TemplateOf<
    Awaited<ReturnType<NonNullable<(typeof builtinTransports)[K]['template']>>>
  >;
}[BuiltinCallTemplateType];

/** The built-in `call_template_type` values. */
export const BUILTIN_CALL_TEMPLATE_TYPES = Object.freeze(
  Object.keys(builtinTransports),
) as readonly BuiltinCallTemplateType[];
