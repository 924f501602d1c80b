/**
 * `serveMcp` with the v2 MCP client SDK (`@modelcontextprotocol/client`, negotiating the protocol version), next to the
 * v1-SDK client used by serve-mcp.test.ts and serve-mcp-process.test.ts: both client generations must work.
 */
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect, it, onTestFinished } from 'vitest';
import { type Tool, UtcpClient } from '../../src/index.js';
import { encodeMcpToolName, type McpBridgeClient, serveMcp } from '../../src/mcp/serve-mcp.js';

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

async function addBridge(transport: Parameters<typeof serveMcp>[1] = { transport: 'http' }) {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  await client.registerFunctions('demo', [
    {
      name: 'add',
      inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      handler: ({ a, b }) => ({ sum: (a as number) + (b as number) }),
    },
  ]);
  const handle = await serveMcp(client, transport, { listChanged: true });
  onTestFinished(() => handle.close());
  return handle;
}

const bearer = (handle: { token?: string }) => ({
  requestInit: { headers: { authorization: `Bearer ${handle.token}` } },
});

it('offers protocol 2026-07-28 to a host that asks for it, over HTTP and stdio', async () => {
  const handle = await addBridge();
  const pinned = () => {
    const mcp = new Client(
      { name: 'pinned', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    onTestFinished(() => mcp.close());
    return mcp;
  };
  const http = pinned();
  await http.connect(new StreamableHTTPClientTransport(new URL(handle.url!), bearer(handle)));
  expect(http.getProtocolEra()).toBe('modern');
  expect(http.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  expect((await http.listTools()).tools.map((t) => t.name)).toEqual(['demo.add']);
  expect((await http.callTool({ name: 'demo.add', arguments: { a: 4, b: 5 } })).structuredContent).toEqual({ sum: 9 });

  const stdio = pinned();
  await stdio.connect(
    new StdioClientTransport({ command: process.execPath, args: [fixture, 'stdio'], cwd: repoRoot, stderr: 'pipe' }),
  );
  expect(stdio.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  const result = await stdio.callTool({ name: 'demo.add', arguments: { a: 20, b: 22 } });
  expect(JSON.stringify(result.content)).toContain('42');
}, 60_000);

it('answers a host asking for an older revision in that revision, with a session', async () => {
  const handle = await addBridge();
  // The v2 client's default: the 2025 `initialize` handshake at its newest 2025 revision.
  const mcp = new Client({ name: 'legacy', version: '1.0.0' });
  onTestFinished(() => mcp.close());
  const transport = new StreamableHTTPClientTransport(new URL(handle.url!), bearer(handle));
  await mcp.connect(transport);
  expect(mcp.getProtocolEra()).toBe('legacy');
  expect(mcp.getNegotiatedProtocolVersion()).toBe('2025-11-25');
  expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect((await mcp.callTool({ name: 'demo.add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 });

  // An older host on the wire: it is answered in the revision it asked for.
  const res = await fetch(handle.url!, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${handle.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '0' } },
    }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain('"protocolVersion":"2025-03-26"');
});

it('stateless: no session id, any request answered alone, list_changed refused with sessions options', async () => {
  const handle = await addBridge({ transport: 'http', stateless: true });
  const mcp = new Client({ name: 'stateless', version: '1.0.0' });
  onTestFinished(() => mcp.close());
  const transport = new StreamableHTTPClientTransport(new URL(handle.url!), bearer(handle));
  await mcp.connect(transport);
  expect(transport.sessionId).toBeUndefined();
  expect((await mcp.callTool({ name: 'demo.add', arguments: { a: 2, b: 2 } })).structuredContent).toEqual({ sum: 4 });
  // A request with no token is refused as in the default mode.
  const res = await fetch(handle.url!, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(401);
  await res.body?.cancel();
  await handle.notifyToolListChanged(); // no open subscription: nothing to send, no error

  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  for (const bad of [{ maxSessions: 3 }, { sessionIdleTimeoutMs: 1000 }])
    await expect(serveMcp(client, { transport: 'http', stateless: true, ...bad })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('stateless'),
    });
});

it('a call looks its tool up alone when it can; encoded names and the filter still resolve as listed', async () => {
  const tool = (name: string) =>
    ({ name, description: name, inputs: { type: 'object', properties: {} }, tags: [] }) as unknown as Tool;
  const tools = [tool('m.plain'), tool('m.with space'), tool('m.hidden')];
  let listings = 0;
  const client: McpBridgeClient = {
    getTools: async () => {
      listings++;
      return tools;
    },
    getTool: async (name) => tools.find((t) => t.name === name),
    callTool: (async (name: string) => ({ called: name })) as McpBridgeClient['callTool'],
  };
  const handle = await serveMcp(client, { transport: 'http' }, { filter: (t) => t.name !== 'm.hidden' });
  onTestFinished(() => handle.close());
  const mcp = v2Client();
  await mcp.connect(new StreamableHTTPClientTransport(new URL(handle.url!), bearer(handle)));
  const listed = (await mcp.listTools()).tools.map((t) => t.name);
  expect(listed).toEqual(['m.plain', encodeMcpToolName('m.with space')]);
  listings = 0;
  expect((await mcp.callTool({ name: 'm.plain', arguments: {} })).structuredContent).toEqual({ called: 'm.plain' });
  expect(listings).toBe(0);
  expect((await mcp.callTool({ name: listed[1], arguments: {} })).structuredContent).toEqual({
    called: 'm.with space',
  });
  await expect(mcp.callTool({ name: 'm.hidden', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  await expect(mcp.callTool({ name: 'm.nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
});

it('tells a 2026-07-28 host listening for changes that the tool list changed', async () => {
  const handle = await addBridge();
  const mcp = new Client(
    { name: 'listener', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  onTestFinished(() => mcp.close());
  await mcp.connect(new StreamableHTTPClientTransport(new URL(handle.url!), bearer(handle)));
  const changed = new Promise<void>((resolve) =>
    mcp.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
  );
  const subscription = await mcp.listen({ toolsListChanged: true });
  onTestFinished(() => subscription.close());
  expect(subscription.honoredFilter.toolsListChanged).toBe(true);
  await handle.notifyToolListChanged();
  await changed;
});
