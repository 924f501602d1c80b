/**
 * `serveMcp` with the v2 MCP client SDK (`@modelcontextprotocol/client`, negotiating the protocol version), next to the
 * v1-SDK client used by serve-mcp.test.ts and serve-mcp-process.test.ts: both client generations must work.
 */
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { serveMcp } from '../../src/mcp/serve-mcp.js';

const fixture = fileURLToPath(new URL('../fixtures/mcp-bridge/serve-bridge.mjs', import.meta.url));
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function v2Client(): Client {
  const mcp = new Client({ name: 'bridge-v2-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  onTestFinished(() => mcp.close());
  return mcp;
}

it('serves tools to a v2-SDK client over streamable HTTP', async () => {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  await client.registerFunctions('demo', [
    {
      name: 'add',
      inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      handler: ({ a, b }) => ({ sum: (a as number) + (b as number) }),
    },
  ]);
  const handle = await serveMcp(client, { transport: 'http' });
  onTestFinished(() => handle.close());
  const mcp = v2Client();
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(handle.url!), {
      requestInit: { headers: { authorization: `Bearer ${handle.token}` } },
    }),
  );
  expect(mcp.getNegotiatedProtocolVersion()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['demo.add']);
  const result = await mcp.callTool({ name: 'demo.add', arguments: { a: 2, b: 5 } });
  expect(result.structuredContent).toEqual({ sum: 7 });
});

it('serves tools to a v2-SDK client over stdio', async () => {
  const mcp = v2Client();
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [fixture, 'stdio'],
      cwd: repoRoot,
      stderr: 'pipe',
    }),
  );
  expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('demo.add');
  const result = await mcp.callTool({ name: 'demo.add', arguments: { a: 1, b: 1 } });
  expect(JSON.stringify(result.content)).toContain('2');
}, 60_000);
