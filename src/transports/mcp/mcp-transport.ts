import { createHash } from 'node:crypto';
import { TransportError, UtcpError } from '../../core/errors.js';
import { abortError, callScope } from '../../core/deadline.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, JsonSchema, Tool } from '../../core/types.js';
import type { McpCallTemplate, McpServerConfig } from './template.js';
import { loadMcpSdk, type McpSdk } from './load-mcp-sdk.js';
import { mapToolResult } from './map-tool-result.js';
import { McpSession, type SessionCallOptions } from './mcp-session.js';
import { resolveServerConfig, serverEntries, type ResolvedServer } from './resolve-server-config.js';
import { errorMessage } from '../../core/guards.js';

/** Prefix of the tools generated for resources (`register_resources_as_tools`). */
const RESOURCE_PREFIX = 'resource_';

const RESOURCE_INPUTS: JsonSchema = Object.freeze({ type: 'object', properties: {}, required: [] }) as JsonSchema;
const RESOURCE_OUTPUTS: JsonSchema = Object.freeze({
  type: 'object',
  properties: { contents: { type: 'array' } },
}) as JsonSchema;

/** Where a tool's calls go, worked out once per stored tool (docs/design/transports.md#mcp-call-path). */
interface CallTarget {
  manualName: string;
  template: McpCallTemplate;
  /** The servers that may have the tool: the one its name starts with, else every server in config order. */
  candidates: string[];
  named: boolean;
  /** The tool's name on the server. */
  toolName: string;
  /** `<server>.<tool>` for messages, when the server is known from the name. */
  label: string | undefined;
  /** The tool reads a resource (`register_resources_as_tools`). */
  resource: boolean;
}

interface DiscoveredServer {
  tools: Tool[];
  warnings: string[];
}

/**
 * The `mcp` transport (docs/design/transports.md#mcp): discovers the tools of every configured MCP server and
 * calls them over one persistent session per (manual, server). Each client has its own instance,
 * so sessions are never shared between clients, nor between manuals.
 */
export class McpTransport implements Transport<McpCallTemplate> {
  readonly type = 'mcp';
  readonly #ctx: TransportContext;
  /** manual name → server name → session. */
  readonly #sessions = new Map<string, Map<string, McpSession>>();
  readonly #serversByTemplate = new WeakMap<
    McpCallTemplate,
    { entries: ReturnType<typeof serverEntries>; configs: Map<string, unknown> }
  >();
  readonly #resolvedByTemplate = new WeakMap<
    McpCallTemplate,
    Map<string, { server: ResolvedServer; fingerprint: string }>
  >();
  /** Call targets per stored tool; an entry is used only for the same manual name and template object. */
  readonly #targets = new WeakMap<Tool, CallTarget>();
  /** Manuals whose refresh was requested and has not started yet (coalesces `list_changed` bursts). */
  readonly #refreshRequested = new Set<string>();
  /** Sessions being closed in the background (replaced or removed from the config); awaited by close(). */
  readonly #closing = new Set<Promise<void>>();
  #sdk: Promise<McpSdk> | undefined;
  #closed = false;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  #loadSdk = (): Promise<McpSdk> => {
    this.#sdk ??= loadMcpSdk().catch((error) => {
      this.#sdk = undefined;
      throw error;
    });
    return this.#sdk;
  };

  #assertOpen(): void {
    if (this.#closed) throw new UtcpError('CLIENT_CLOSED', 'The mcp transport is closed');
  }

  // ------------------------------------------------------------------ discovery

  async registerManual(template: McpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    this.#assertOpen();
    const manualName = options.manualName;
    this.#refreshRequested.delete(manualName);
    const entries = serverEntries(template);
    this.#closeSessionsNotIn(manualName, new Set(entries.map(([name]) => name)));
    const outcomes = await Promise.all(
      entries.map(([name, config]) =>
        this.#discoverServer(template, name, config, options).then(
          (ok) => ({ name, ok, error: undefined }),
          (error: unknown) => ({ name, ok: undefined, error }),
        ),
      ),
    );
    const scope = callScope(options);
    if (scope.aborted) throw abortError(scope, `MCP discovery of manual ${manualName}`, options.timeoutMs);
    const tools: Tool[] = [];
    const warnings: string[] = [];
    const failures: string[] = [];
    for (const outcome of outcomes) {
      if (outcome.ok) {
        tools.push(...outcome.ok.tools);
        warnings.push(...outcome.ok.warnings);
      } else {
        failures.push(`MCP server '${outcome.name}' failed: ${errorMessage(outcome.error)}`);
        await this.#closeSession(manualName, outcome.name);
      }
    }
    if (entries.length === 0) warnings.push(`MCP manual ${manualName} configures no servers`);
    if (entries.length > 0 && failures.length === entries.length) {
      const first = outcomes[0].error;
      if (entries.length === 1 && first instanceof UtcpError) throw first;
      throw new TransportError(`Every MCP server of manual ${manualName} failed: ${failures.join('; ')}`, {
        cause: first,
      });
    }
    return { manual: { utcp_version: '1.0.0', manual_version: '1.0.0', tools }, warnings: [...failures, ...warnings] };
  }

  async #discoverServer(
    template: McpCallTemplate,
    name: string,
    config: unknown,
    options: CallOptions,
  ): Promise<DiscoveredServer> {
    const server = resolveServerConfig(name, config, this.#ctx.rootDir);
    const session = this.#session(options.manualName, server, template);
    const callOptions: SessionCallOptions = { scope: callScope(options), timeoutMs: options.timeoutMs };
    const listing = await session.listTools(callOptions);
    const raw = options.rawTemplate;
    const tools: Tool[] = listing.items.map((t) => ({
      name: `${name}.${t.name}`,
      description: t.description ?? '',
      inputs: (t.inputSchema ?? { type: 'object', properties: {} }) as JsonSchema,
      outputs: (t.outputSchema ?? {}) as JsonSchema,
      tags: [],
      tool_call_template: raw,
    }));
    const warnings = [...listing.warnings];
    if (template.register_resources_as_tools === true) {
      try {
        const resources = await session.listResources(callOptions);
        warnings.push(...resources.warnings);
        for (const r of resources.items) {
          tools.push({
            name: `${name}.${RESOURCE_PREFIX}${r.name}`,
            description: `Read resource: ${r.description || r.name}. URI: ${r.uri}`,
            inputs: structuredClone(RESOURCE_INPUTS),
            outputs: structuredClone(RESOURCE_OUTPUTS),
            tags: [],
            tool_call_template: raw,
          });
        }
      } catch (error) {
        if (callOptions.scope.aborted) throw error;
        warnings.push(`MCP server '${name}': listing resources failed: ${errorMessage(error)}`);
      }
    }
    return { tools, warnings };
  }

  // ------------------------------------------------------------------ calls

  callTool(tool: Tool, args: JsonObject, template: McpCallTemplate, options: CallOptions): Promise<unknown> {
    try {
      this.#assertOpen();
      const target = this.#target(tool, template, options.manualName);
      const callOptions: SessionCallOptions = {
        scope: callScope(options),
        timeoutMs: options.timeoutMs,
        onProgress: options.onProgress,
      };
      if (!target.named || target.resource) return this.#callSearching(target, args, callOptions, options);
      // A tool of a known server (the common case): one promise chain, no async frame.
      const session = this.#sessionFor(
        target.manualName,
        template,
        target.candidates[0],
        options.remoteSource === true,
      );
      const pending = session.callTool(target.toolName, args, callOptions);
      return options.raw ? pending : pending.then((result) => mapToolResult(result, target.label!));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A bare tool name (servers searched in config order) or a resource read. */
  async #callSearching(
    target: CallTarget,
    args: JsonObject,
    callOptions: SessionCallOptions,
    options: CallOptions,
  ): Promise<unknown> {
    const { candidates, toolName, manualName, template } = target;
    const remoteSource = options.remoteSource === true;
    const sessionOf = (name: string) => this.#sessionFor(manualName, template, name, remoteSource);

    if (target.resource) {
      const resourceName = toolName.slice(RESOURCE_PREFIX.length);
      const found = await this.#search(candidates, callOptions, async (name) => {
        const session = sessionOf(name);
        const resource = await session.findResource(resourceName, callOptions);
        return resource ? { session, uri: resource.uri } : undefined;
      });
      if (!found)
        throw new UtcpError('TOOL_NOT_FOUND', `Resource '${resourceName}' not found in any configured server`);
      return found.session.readResource(found.uri, callOptions);
    }

    const found = await this.#search(candidates, callOptions, async (name) => {
      const candidate = sessionOf(name);
      return (await candidate.hasTool(toolName, callOptions)) ? { session: candidate } : undefined;
    });
    if (!found) throw new UtcpError('TOOL_NOT_FOUND', `Tool '${toolName}' not found in any configured server`);
    const result = await found.session.callTool(toolName, args, callOptions);
    if (options.raw) return result;
    return mapToolResult(result, `${found.session.server.name}.${toolName}`);
  }

  /** Splits `<manual>.<server>.<tool>` (or `<manual>.<tool>`) once per stored tool. */
  #target(tool: Tool, template: McpCallTemplate, manualName: string): CallTarget {
    const known = this.#targets.get(tool);
    if (known && known.template === template && known.manualName === manualName) return known;
    const rest = tool.name.startsWith(`${manualName}.`) ? tool.name.slice(manualName.length + 1) : tool.name;
    const { entries, configs } = this.#servers(template);
    const dot = rest.indexOf('.');
    const named = dot > 0 && configs.has(rest.slice(0, dot));
    const toolName = named ? rest.slice(dot + 1) : rest;
    const target: CallTarget = {
      manualName,
      template,
      candidates: named ? [rest.slice(0, dot)] : entries.map(([name]) => name),
      named,
      toolName,
      label: named ? `${rest.slice(0, dot)}.${toolName}` : undefined,
      resource: template.register_resources_as_tools === true && toolName.startsWith(RESOURCE_PREFIX),
    };
    this.#targets.set(tool, target);
    return target;
  }

  #sessionFor(manualName: string, template: McpCallTemplate, name: string, remoteSource: boolean): McpSession {
    const { configs } = this.#servers(template);
    const { server, fingerprint } = this.#resolve(template, name, configs.get(name) as McpServerConfig | undefined);
    return this.#session(manualName, server, template, fingerprint, remoteSource);
  }

  /** Tries servers in config order; a server that fails to answer is skipped unless none has the item. */
  async #search<T>(
    servers: string[],
    options: SessionCallOptions,
    probe: (server: string) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let firstError: unknown;
    for (const name of servers) {
      try {
        const hit = await probe(name);
        if (hit) return hit;
      } catch (error) {
        if (options.scope.aborted) throw error;
        firstError ??= error;
      }
    }
    if (firstError !== undefined) throw firstError;
    return undefined;
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: McpCallTemplate,
    options: CallOptions,
  ): AsyncIterable<unknown> {
    yield await this.callTool(tool, args, template, options);
  }

  // ------------------------------------------------------------------ sessions

  /** The template's servers in config order, cached per template object. */
  #servers(template: McpCallTemplate): { entries: ReturnType<typeof serverEntries>; configs: Map<string, unknown> } {
    let hit = this.#serversByTemplate.get(template);
    if (!hit) {
      const entries = serverEntries(template);
      this.#serversByTemplate.set(template, (hit = { entries, configs: new Map(entries) }));
    }
    return hit;
  }

  /** Resolved server config and session fingerprint, cached per template object (stored templates never change). */
  #resolve(
    template: McpCallTemplate,
    name: string,
    config: McpServerConfig | undefined,
  ): { server: ResolvedServer; fingerprint: string } {
    let byName = this.#resolvedByTemplate.get(template);
    if (!byName) this.#resolvedByTemplate.set(template, (byName = new Map()));
    let hit = byName.get(name);
    if (!hit) {
      const server = resolveServerConfig(name, config, this.#ctx.rootDir);
      const auth = server.kind === 'stdio' ? undefined : template.auth;
      hit = {
        server,
        fingerprint: createHash('sha256')
          .update(JSON.stringify([server, auth ?? null]))
          .digest('hex'),
      };
      byName.set(name, hit);
    }
    return hit;
  }

  #session(
    manualName: string,
    server: ResolvedServer,
    template: McpCallTemplate,
    knownFingerprint?: string,
    remoteSource = false,
  ): McpSession {
    this.#assertOpen();
    const auth = server.kind === 'stdio' ? undefined : template.auth;
    const fingerprint =
      (knownFingerprint ??
        createHash('sha256')
          .update(JSON.stringify([server, auth ?? null]))
          .digest('hex')) + (remoteSource ? '|remote' : '');
    let byServer = this.#sessions.get(manualName);
    if (!byServer) this.#sessions.set(manualName, (byServer = new Map()));
    let session = byServer.get(server.name);
    if (session && session.fingerprint !== fingerprint) {
      this.#closeInBackground(session);
      session = undefined;
    }
    if (!session) {
      session = new McpSession({
        manualName,
        server,
        auth,
        fingerprint,
        ctx: this.#ctx,
        remoteSource,
        loadSdk: this.#loadSdk,
        onListChanged: () => this.#onListChanged(manualName),
      });
      byServer.set(server.name, session);
    }
    return session;
  }

  #onListChanged(manualName: string): void {
    if (this.#closed || this.#refreshRequested.has(manualName)) return;
    this.#refreshRequested.add(manualName);
    this.#ctx.logger.debug?.(`MCP tool list of manual ${manualName} changed; refreshing`);
    this.#ctx.requestRefresh(manualName);
  }

  async #closeSession(manualName: string, serverName: string): Promise<void> {
    const byServer = this.#sessions.get(manualName);
    const session = byServer?.get(serverName);
    if (!session) return;
    byServer!.delete(serverName);
    await session.close();
  }

  #closeSessionsNotIn(manualName: string, keep: Set<string>): void {
    const byServer = this.#sessions.get(manualName);
    if (!byServer) return;
    for (const [name, session] of byServer) {
      if (keep.has(name)) continue;
      byServer.delete(name);
      this.#closeInBackground(session);
    }
  }

  #closeInBackground(session: McpSession): void {
    const closing = session.close().finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }

  async deregisterManual(_template: McpCallTemplate, options: { manualName: string }): Promise<void> {
    const byServer = this.#sessions.get(options.manualName);
    this.#sessions.delete(options.manualName);
    this.#refreshRequested.delete(options.manualName);
    if (byServer) await Promise.all([...byServer.values()].map((s) => s.close()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    const sessions = [...this.#sessions.values()].flatMap((byServer) => [...byServer.values()]);
    this.#sessions.clear();
    this.#refreshRequested.clear();
    await Promise.all([...sessions.map((s) => s.close()), ...this.#closing]);
  }

  /** Live sessions, for diagnostics and tests: `<manual>/<server>` → pid of the stdio server (if any) and the negotiated protocol version. */
  sessionInfo(): Array<{
    manual: string;
    server: string;
    pid: number | undefined;
    protocolVersion: string | undefined;
  }> {
    return [...this.#sessions].flatMap(([manual, byServer]) =>
      [...byServer].map(([server, s]) => ({ manual, server, pid: s.pid, protocolVersion: s.protocolVersion })),
    );
  }
}
