/** `utcp serve-mcp`: expose the tools of the given sources as an MCP server (stdio or streamable HTTP). */
import { resolve } from 'node:path';
import { serveMcp } from '../mcp/index.js';
import { EXIT, UsageError, clientOptions, sourceFailure, type Common } from './commands.js';
import { dim, green, yellow } from './output.js';
import { createCliClient } from './sources.js';

export interface ServeMcpCommandOptions {
  http: boolean;
  port: number;
  codeTools?: string;
  /** --code-mode: also serve code_mode.run and code_mode.describe (utcp-kit/code-mode). */
  codeMode?: boolean;
  noAuth?: boolean;
  /** --stateless: no session between requests (docs/design/transports.md#mcp-bridge-stateless). */
  stateless?: boolean;
  maxSessions?: number;
  sessionIdleTimeoutMs?: number;
  /** --dangerously-run-unsandboxed: bash of --code-tools may run without a kernel sandbox. */
  unsandboxed?: boolean;
}

/** The token hosts must send: UTCP_MCP_TOKEN when set, undefined to let serveMcp generate one. */
function tokenFromEnvironment(opts: ServeMcpCommandOptions): string | undefined {
  const token = process.env.UTCP_MCP_TOKEN || undefined;
  if (token === undefined) return undefined;
  if (opts.noAuth) throw new UsageError('--no-auth and UTCP_MCP_TOKEN contradict each other: unset one of them');
  // The library checks the same; checked here first so a bad variable fails before the sources load. Never echoed.
  if (token.length < 16 || token.length > 1024 || !/^[\x21-\x7e]+$/.test(token))
    throw new UsageError(
      `UTCP_MCP_TOKEN must be 16 to 1024 visible ASCII characters without spaces (it has ${token.length})`,
    );
  return token;
}

function checkHttpOptions(opts: ServeMcpCommandOptions): void {
  const httpOnly = [
    opts.noAuth && '--no-auth',
    opts.stateless && '--stateless',
    opts.maxSessions !== undefined && '--max-sessions',
    opts.sessionIdleTimeoutMs !== undefined && '--session-idle',
  ].filter(Boolean);
  if (!opts.http && httpOnly.length) throw new UsageError(`${httpOnly.join(', ')}: only with --http`);
  if (opts.stateless && (opts.maxSessions !== undefined || opts.sessionIdleTimeoutMs !== undefined))
    throw new UsageError('--max-sessions and --session-idle bound sessions; --stateless keeps none: drop one of them');
  if (opts.maxSessions === 0) throw new UsageError('--max-sessions expects a positive integer, got "0"');
  if (opts.sessionIdleTimeoutMs === 0) throw new UsageError('--session-idle expects a positive integer, got "0"');
}

export async function serveMcpCommand(c: Common, opts: ServeMcpCommandOptions): Promise<number> {
  checkHttpOptions(opts);
  const envToken = opts.http ? tokenFromEnvironment(opts) : undefined;
  const { client, results } = await createCliClient(clientOptions(c));
  for (const r of results) if (!r.success) c.out.info(`✗ ${r.manualCallTemplate?.name}: ${r.errors.join('; ')}`);
  const failure = sourceFailure(results);
  if (failure && results.every((r) => !r.success) && opts.codeTools === undefined) {
    await client.close();
    throw failure;
  }
  if (opts.codeTools !== undefined) {
    // The utcp-kit/tools coding toolset on a workspace directory, next to the sources' tools.
    try {
      const { registerCodeTools } = await import('../tools/index.js');
      const code = await registerCodeTools(client, {
        root: resolve(c.cwd, opts.codeTools),
        dangerouslyRunUnsandboxed: opts.unsandboxed === true,
      });
      c.out.info(
        `${green(c.out, '✓')} code tools on ${code.root} (sandbox ${code.sandbox}${code.sandboxReason ? `: ${code.sandboxReason}` : ''})`,
      );
    } catch (error) {
      await client.close();
      if (/dangerouslyRunUnsandboxed/.test(error instanceof Error ? error.message : ''))
        c.out.info('On the command line, that opt-in is --dangerously-run-unsandboxed.');
      throw error;
    }
  }
  if (opts.codeMode) {
    // Code mode over every tool served (docs/design/code-mode.md#tools); its engine loads on the first run.
    try {
      const { registerCodeMode } = await import('../code-mode/index.js');
      await registerCodeMode(client);
    } catch (error) {
      await client.close();
      throw error;
    }
  }
  const tools = await client.getTools();
  let handle: Awaited<ReturnType<typeof serveMcp>>;
  try {
    handle = await serveMcp(
      client,
      opts.http
        ? {
            transport: 'http',
            port: opts.port,
            auth: opts.noAuth ? 'none' : envToken ? { token: envToken } : undefined,
            maxSessions: opts.maxSessions,
            sessionIdleTimeoutMs: opts.sessionIdleTimeoutMs,
            ...(opts.stateless ? { stateless: true } : {}),
          }
        : { transport: 'stdio' },
      { timeoutMs: c.timeoutMs },
    );
  } catch (error) {
    await client.close();
    throw error;
  }
  // stdout belongs to the MCP protocol in stdio mode: everything else goes to stderr.
  c.out.info(
    `${green(c.out, '✓')} serving ${tools.length} tool(s) over MCP ${opts.http ? `at ${handle.url}${opts.stateless ? ' (stateless)' : ''}` : 'on stdio'}${dim(c.out, opts.http ? ' (Ctrl-C to stop)' : '')}`,
  );
  // The one place the token is printed, once, to stderr (docs/design/threat-model.md#mcp-bridge-auth).
  if (opts.http && opts.noAuth)
    c.out.info(`${yellow(c.out, '!')} --no-auth: any local process or user can call these tools`);
  else if (opts.http && envToken) c.out.info(`  hosts must send "Authorization: Bearer $UTCP_MCP_TOKEN"`);
  else if (opts.http) c.out.info(`  bearer token (send "Authorization: Bearer <token>"): ${handle.token}`);
  const stop = () => void handle.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await handle.closed;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  await client.close();
  return EXIT.OK;
}
