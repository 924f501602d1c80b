/**
 * Two clients never share state: both use the same servers over every pooled transport (HTTP
 * dispatcher, WebSocket pool, gRPC channel, GraphQL, MCP stdio session), then one closes while the
 * other has a call in flight. The survivor's call completes and it keeps working.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { UtcpClient, type CallTemplate } from '../../src/index.js';
import { deferred, json, startServer, type TestServer } from '../fixtures/http/server.js';
import { startGraphqlServer } from '../../examples/sockets-client/servers/graphql-server.js';
import { startGrpcServer } from '../../examples/sockets-client/servers/grpc-server.js';
import { startWebSocketServer } from '../../examples/sockets-client/servers/websocket-server.js';

const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

let http: TestServer;
let servers: Array<{ close(): Promise<void> }>;
let templates: CallTemplate[];
const release = deferred();
const held = deferred();

beforeAll(async () => {
  http = await startServer(async (req, res) => {
    if (req.url === '/utcp')
      return json(res, {
        tools: [
          {
            name: 'slow',
            description: '',
            inputs: {},
            outputs: {},
            tags: [],
            tool_call_template: { call_template_type: 'http', url: `${http.url}/slow`, http_method: 'GET' },
          },
        ],
      });
    held.resolve();
    await release.promise;
    json(res, { ok: true });
  });
  const [ws, grpc, graphql] = await Promise.all([startWebSocketServer(), startGrpcServer(), startGraphqlServer()]);
  servers = [http, ws, grpc, graphql];
  templates = [
    { name: 'h', call_template_type: 'http', url: `${http.url}/utcp`, http_method: 'GET' },
    { name: 'ws', call_template_type: 'websocket', url: ws.url },
    { name: 'grpc', call_template_type: 'grpc', host: '127.0.0.1', port: grpc.port },
    { name: 'gql', call_template_type: 'graphql', url: graphql.url },
    {
      name: 'mcp',
      call_template_type: 'mcp',
      config: { mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } },
    },
  ] as CallTemplate[];
}, 30_000);

afterAll(async () => {
  release.resolve();
  await Promise.all(servers.map((s) => s.close()));
});

async function clientWithAll(): Promise<UtcpClient> {
  const client = await UtcpClient.create();
  for (const t of templates) {
    const r = await client.registerManual(t);
    expect(r.errors).toEqual([]);
  }
  return client;
}

async function useAll(client: UtcpClient): Promise<unknown[]> {
  return [
    await client.callTool('ws.add', { a: 1, b: 2 }),
    await client.callTool('grpc.add', { a: 1, b: 2 }),
    await client.callTool('gql.add', { a: 1, b: 2 }),
    await client.callTool('mcp.everything.echo', { message: 'hi' }),
  ];
}

it('closing one client leaves the other one working, in-flight call included', async () => {
  const a = await clientWithAll();
  const b = await clientWithAll();
  const expected = [3, 3, 3, 'Echo: hi'];
  expect(await useAll(a)).toEqual(expected);
  expect(await useAll(b)).toEqual(expected);

  const inFlight = b.callTool('h.slow', {});
  await held.promise;
  const closedA = a.callTool('h.slow', {}).then(
    () => 'resolved',
    (e: { code?: string }) => e.code,
  );
  await a.close();
  expect(await closedA).toBe('CLIENT_CLOSED');

  release.resolve();
  await expect(inFlight).resolves.toEqual({ ok: true });
  expect(await useAll(b)).toEqual(expected);
  await b.close();
}, 30_000);
