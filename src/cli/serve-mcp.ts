/** `utcp serve-mcp`: expose the tools of the given sources as an MCP server (stdio or streamable HTTP). */
import { resolve } from 'node:path';
import { serveMcp } from '../mcp/index.js';
import { EXIT, sourceFailure, type Common } from './commands.js';
import { dim, green } from './output.js';
import { createCliClient } from './sources.js';

export async function serveMcpCommand(
  c: Common,
  opts: { http: boolean; port: number; codeTools?: string; unsandboxed?: boolean },
): Promise<number> {
  const { client, results } = await createCliClient({
    cwd: c.cwd,
    sources: c.sources,
    configPath: c.config,
    timeoutMs: c.timeoutMs,
    baseUrl: c.baseUrl,
  });
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
  const tools = await client.getTools();
  const handle = await serveMcp(client, opts.http ? { transport: 'http', port: opts.port } : { transport: 'stdio' }, {
    timeoutMs: c.timeoutMs,
  });
  // stdout belongs to the MCP protocol in stdio mode: everything else goes to stderr.
  c.out.info(
    `${green(c.out, '✓')} serving ${tools.length} tool(s) over MCP ${opts.http ? `at ${handle.url}` : 'on stdio'}${dim(c.out, opts.http ? ' (Ctrl-C to stop)' : '')}`,
  );
  const stop = () => void handle.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await handle.closed;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  await client.close();
  return EXIT.OK;
}
