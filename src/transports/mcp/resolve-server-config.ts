import { resolve } from 'node:path';
import { UtcpError } from '../../core/errors.js';
import { argToText } from '../../core/stringify.js';
import type { McpCallTemplate } from './template.js';
import { assertHeaderSafe, assertUrlAllowed } from '../../core/url-policy.js';
import { isPlainObject } from '../../core/guards.js';

/** How a server is reached. `http-auto` tries streamable HTTP, then the legacy SSE transport. */
export type McpServerKind = 'stdio' | 'streamable-http' | 'sse' | 'http-auto';

/** Per-request timeout when the server config sets none, in seconds (docs/design/transports.md#mcp). */
export const DEFAULT_MCP_TIMEOUT_SECONDS = 30;

export interface StdioServer {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  /** Only the server's own `env` (the allowlisted host variables are added at spawn time). */
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
}

export interface HttpServer {
  kind: 'streamable-http' | 'sse' | 'http-auto';
  name: string;
  url: URL;
  headers: Record<string, string>;
  timeoutMs: number;
}

export type ResolvedServer = StdioServer | HttpServer;

const TRANSPORT_ALIASES: Record<string, McpServerKind> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamable_http: 'streamable-http',
  streamablehttp: 'streamable-http',
  sse: 'sse',
};

function invalid(server: string, message: string): UtcpError {
  return new UtcpError('INVALID_MANUAL', `MCP server '${server}': ${message}`);
}

/**
 * The `config.mcpServers` map of a template, in config order.
 * @throws UtcpError INVALID_MANUAL when it is missing or not an object.
 */
export function serverEntries(template: McpCallTemplate): Array<[string, unknown]> {
  const servers = isPlainObject(template.config) ? template.config.mcpServers : undefined;
  if (!isPlainObject(servers)) {
    throw new UtcpError('INVALID_MANUAL', 'mcp: config.mcpServers is required (an object of server configurations)');
  }
  return Object.entries(servers);
}

function stringMap(server: string, field: string, value: unknown, header: boolean): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw invalid(server, `${field} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(value)) {
    const text = argToText(raw);
    if (text === undefined) continue;
    if (header) assertHeaderSafe(key, text);
    else if (key === '' || key.includes('=') || key.includes('\0') || text.includes('\0')) {
      throw invalid(server, `${field} has an invalid variable name or a NUL character`);
    }
    out[key] = text;
  }
  return out;
}

function timeoutOf(server: string, value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_MCP_TIMEOUT_SECONDS * 1000;
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw invalid(server, 'timeout must be a positive number of seconds');
  }
  return Math.round(seconds * 1000);
}

/**
 * Validates one `mcpServers` entry and applies defaults. HTTP URLs pass the URL policy
 * (context `MCP server URL`) here, before any I/O.
 * @throws UtcpError INVALID_MANUAL, UrlPolicyError, UtcpError HEADER_INJECTION
 */
export function resolveServerConfig(name: string, raw: unknown, rootDir: string): ResolvedServer {
  if (name === '' || name.includes('.')) throw invalid(name, "server names must be non-empty and must not contain '.'");
  if (!isPlainObject(raw)) throw invalid(name, 'the configuration must be an object');
  let kind: McpServerKind | undefined;
  if (raw.transport !== undefined && raw.transport !== null) {
    kind = typeof raw.transport === 'string' ? TRANSPORT_ALIASES[raw.transport.toLowerCase()] : undefined;
    if (!kind) throw invalid(name, 'transport must be one of stdio, http, streamable-http, sse');
  } else if (raw.command !== undefined && raw.command !== null) {
    kind = 'stdio';
  } else if (raw.url !== undefined && raw.url !== null) {
    kind = 'http-auto';
  } else {
    throw invalid(name, 'needs either "command" (stdio) or "url" (HTTP)');
  }
  const timeoutMs = timeoutOf(name, raw.timeout);

  if (kind === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '')
      throw invalid(name, 'command must be a non-empty string');
    if (raw.args !== undefined && raw.args !== null && !Array.isArray(raw.args))
      throw invalid(name, 'args must be a list');
    const args = ((raw.args as unknown[] | null | undefined) ?? []).map((a) => {
      const text = argToText(a);
      if (text === undefined || text.includes('\0')) throw invalid(name, 'args must be strings without NUL characters');
      return text;
    });
    if (raw.cwd !== undefined && raw.cwd !== null && typeof raw.cwd !== 'string')
      throw invalid(name, 'cwd must be a string');
    const cwd = typeof raw.cwd === 'string' && raw.cwd !== '' ? resolve(rootDir, raw.cwd) : rootDir;
    return { kind, name, command: raw.command, args, env: stringMap(name, 'env', raw.env, false), cwd, timeoutMs };
  }

  if (typeof raw.url !== 'string' || raw.url === '')
    throw invalid(name, `transport ${kind === 'sse' ? 'sse' : 'http'} needs a url`);
  const url = assertUrlAllowed(raw.url, 'MCP server URL');
  return { kind, name, url, headers: stringMap(name, 'headers', raw.headers, true), timeoutMs };
}
