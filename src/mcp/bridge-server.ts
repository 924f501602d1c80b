import type { Logger, Tool, UtcpClient } from '../index.js';
import { createDeadline, errorMessage } from '../internal.js';
import { toCallToolResult, toErrorResult, toMcpTool, toOutputSchema } from './convert.js';
import { OutputChecker } from './bridge-output-schema.js';
import { encodeMcpToolName } from './mcp-tool-names.js';
import type { McpServerSdk } from './sdk.js';

/** What the bridge needs from a client (`getTool`, when present, spares a listing per call). */
export type McpBridgeClient = Pick<UtcpClient, 'getTools' | 'callTool'> & Partial<Pick<UtcpClient, 'getTool'>>;

/** Which tools to serve: full UTCP names (`<manual>.<tool>`), or a predicate. */
export type McpToolFilter = readonly string[] | ((tool: Tool) => boolean);

export interface BridgeServerSettings {
  client: McpBridgeClient;
  filter?: McpToolFilter;
  serverInfo: { name: string; version: string };
  instructions?: string;
  listChanged: boolean;
  outputSchemas: boolean;
  timeoutMs?: number;
  /** Aborts every running call when the bridge closes. */
  closing: AbortSignal;
  logger: Required<Logger>;
}

function compileFilter(filter: McpToolFilter | undefined): (tool: Tool) => boolean {
  if (filter === undefined) return () => true;
  if (typeof filter === 'function') return filter;
  const names = new Set(filter);
  return (tool) => names.has(tool.name);
}

/** The served tools by MCP name, read from the client on every request so registrations show up at once. */
export async function servedTools(settings: BridgeServerSettings): Promise<Map<string, Tool>> {
  const accept = compileFilter(settings.filter);
  const byName = new Map<string, Tool>();
  for (const tool of await settings.client.getTools()) {
    if (!accept(tool)) continue;
    const mcpName = encodeMcpToolName(tool.name);
    const taken = byName.get(mcpName);
    if (taken) {
      settings.logger.warn(`MCP bridge: two tools share an MCP name; serving only ${taken.name}`, {
        mcpName,
        served: taken.name,
        skipped: tool.name,
      });
      continue;
    }
    byName.set(mcpName, tool);
  }
  return byName;
}

/** Every encoded MCP name ends so (tool-names.ts); a name that does not can only be a UTCP name served as is. */
const ENCODED_SUFFIX = /_[0-9a-f]{8}$/;

/**
 * The tool served as `mcpName`. A name that cannot be an encoded one is looked up alone when the client can (one
 * catalog read instead of the whole list per call: docs/design/transports.md#mcp-bridge-scaling); the rest go
 * through the full list, which settles which of two tools sharing an encoded name is served.
 */
async function servedTool(settings: BridgeServerSettings, mcpName: string): Promise<Tool | undefined> {
  const { client } = settings;
  if (typeof client.getTool === 'function' && !ENCODED_SUFFIX.test(mcpName)) {
    const tool = await client.getTool(mcpName);
    return tool &&
      tool.name === mcpName &&
      encodeMcpToolName(tool.name) === mcpName &&
      compileFilter(settings.filter)(tool)
      ? tool
      : undefined;
  }
  return (await servedTools(settings)).get(mcpName);
}

/** One output checker per bridge (its sessions share the compiled checks), none shared between bridges. */
const checkers = new WeakMap<BridgeServerSettings, OutputChecker>();

/** The 2026-07-28 revision, offered to hosts that ask for it (docs/design/transports.md#mcp-bridge-protocol-versions). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/**
 * One MCP `Server` (one per stdio connection, legacy HTTP session or stateless HTTP request) that lists and calls the
 * client's tools. It offers 2026-07-28 next to every 2025-era revision the SDK speaks.
 */
export function createBridgeServer(sdk: McpServerSdk, settings: BridgeServerSettings) {
  const server = new sdk.Server(settings.serverInfo, {
    capabilities: { tools: { listChanged: settings.listChanged } },
    supportedProtocolVersions: [MODERN_PROTOCOL_VERSION, ...sdk.SUPPORTED_PROTOCOL_VERSIONS],
    ...(settings.instructions ? { instructions: settings.instructions } : {}),
  });
  server.onerror = (error) => settings.logger.warn('MCP bridge: protocol error', { error: error.message });

  server.setRequestHandler('tools/list', async () => {
    const tools = await servedTools(settings);
    return { tools: [...tools].map(([mcpName, tool]) => toMcpTool(tool, mcpName, settings.outputSchemas)) };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args } = request.params;
    const tool = await servedTool(settings, name);
    if (!tool) throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const onProgress =
      progressToken === undefined
        ? undefined
        : (event: { progress: number; total?: number; message?: string }) => {
            ctx.mcpReq
              .notify({ method: 'notifications/progress', params: { progressToken, ...event } })
              .catch((error: Error) =>
                settings.logger.debug('MCP bridge: progress notification failed', {
                  tool: tool.name,
                  error: error.message,
                }),
              );
          };
    // The host's cancellation or the bridge closing ends the call (docs/design/http-exchange.md#deadlines).
    const scope = createDeadline([ctx.mcpReq.signal, settings.closing], undefined, `MCP bridge call of ${tool.name}`);
    try {
      const result = await settings.client.callTool(tool.name, args ?? {}, {
        signal: scope.signal,
        timeoutMs: settings.timeoutMs,
        onProgress,
      });
      const schema = settings.outputSchemas ? toOutputSchema(tool.outputs) : undefined;
      const out = toCallToolResult(result, { structured: schema !== undefined });
      if (schema && out.structuredContent !== undefined) {
        // Checked as the host will check it: a mismatch would make the host throw the result away, so it goes out as
        // a tool error that still carries the data (docs/design/transports.md#mcp-bridge-output-schemas).
        let checker = checkers.get(settings);
        if (!checker) checkers.set(settings, (checker = new OutputChecker()));
        const problems = await checker.problems(schema, out.structuredContent);
        if (problems.length > 0) {
          const { structuredContent: _dropped, ...rest } = out;
          return {
            ...rest,
            content: [
              {
                type: 'text' as const,
                text: `The result does not match this tool's output schema (${problems.join('; ')}); here it is as the API returned it:`,
              },
              ...out.content,
            ],
            isError: true,
          };
        }
      }
      return out;
    } catch (error) {
      // A cancelled request gets no response at all (the SDK drops it); anything else is a tool error the host can read.
      if (ctx.mcpReq.signal.aborted) throw error;
      settings.logger.debug('MCP bridge: tool call failed', {
        tool: tool.name,
        error: errorMessage(error),
      });
      return toErrorResult(error);
    } finally {
      scope.dispose();
    }
  });

  return server;
}
