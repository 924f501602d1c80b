/**
 * `utcp serve-mcp --http --stateless` scaled out: two built-CLI processes sharing one PostgreSQL catalog behind a
 * round-robin proxy (no affinity) serve one MCP host, whichever protocol era it speaks
 * (docs/design/transports.md#mcp-bridge-stateless). The catalog is filled by this process; the bridges discover
 * nothing themselves.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import {
  startBridgeProcess,
  startCalcApi,
  startRoundRobinProxy,
  type BridgeProcess,
  type RoundRobinProxy,
} from '../helpers/bridge-farm.js';
import { freshSchema } from '../helpers/pglite.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server.js';

const TOKEN = 'stateless-bridge-test-token-0123456789';

let pg: TestPostgres;
let api: Awaited<ReturnType<typeof startCalcApi>>;
let dir: string;
let config: string;
let bridges: BridgeProcess[] = [];

beforeAll(async () => {
  [pg, api] = await Promise.all([startPostgres(), startCalcApi()]);
  dir = await mkdtemp(join(tmpdir(), 'utcp-stateless-'));
  const repository = {
    tool_repository_type: 'postgres',
    connection_string: '${DATABASE_URL}',
    schema: freshSchema('bridge'),
  };
  // One registration, here; the bridges only read the shared catalog.
  const writer = await UtcpClient.create({
    variables: { DATABASE_URL: pg.url },
    tool_repository: repository,
    manual_call_templates: [{ name: 'calc', call_template_type: 'http', url: `${api.base}/manual.json` }],
  });
  expect(writer.initialRegistrations.every((r) => r.success)).toBe(true);
  await writer.close();
  config = join(dir, 'utcp.json');
  await writeFile(config, JSON.stringify({ tool_repository: repository }));
}, 180_000);

afterAll(async () => {
  await Promise.all(bridges.map((b) => b.stop()));
  await Promise.all([pg?.stop(), api?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

async function farm(extraArgs = ['--stateless']): Promise<RoundRobinProxy> {
  const started = await Promise.all(
    [0, 1].map(() => startBridgeProcess(config, { UTCP_MCP_TOKEN: TOKEN, DATABASE_URL: pg.url }, extraArgs)),
  );
  bridges.push(...started);
  onTestFinished(async () => {
    await Promise.all(started.map((b) => b.stop()));
    bridges = bridges.filter((b) => !started.includes(b));
  });
  const proxy = await startRoundRobinProxy(started.map((b) => b.url));
  onTestFinished(() => proxy.close());
  return proxy;
}

const auth = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };

/** Each request went to the other instance than the one before, and both served the same share. */
function expectAlternation(proxy: RoundRobinProxy): void {
  expect(proxy.order.length).toBeGreaterThanOrEqual(4);
  for (let i = 1; i < proxy.order.length; i++) expect(proxy.order[i]).not.toBe(proxy.order[i - 1]);
  expect(Math.abs(proxy.counts[0] - proxy.counts[1])).toBeLessThanOrEqual(1);
}

describe('serve-mcp --http --stateless behind a round-robin proxy', () => {
  it('a v2 client on protocol 2026-07-28 lists and calls, each request on the other instance', async () => {
    const proxy = await farm();
    const mcp = new Client({ name: 'farm-modern', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    onTestFinished(() => mcp.close());
    await mcp.connect(new StreamableHTTPClientTransport(new URL(proxy.url), auth));
    expect(mcp.getProtocolEra()).toBe('modern');
    expect(mcp.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['calc.add']);
    const before = api.calls();
    for (let i = 0; i < 4; i++) {
      const result = await mcp.callTool({ name: 'calc.add', arguments: { a: i, b: 10 } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ sum: i + 10 });
    }
    expect(api.calls() - before).toBe(4);
    expectAlternation(proxy);
  }, 120_000);

  it('a v2 client on a 2025 revision (no session to keep) lists and calls through both instances', async () => {
    const proxy = await farm();
    const mcp = new Client({ name: 'farm-legacy', version: '1.0.0' });
    onTestFinished(() => mcp.close());
    await mcp.connect(new StreamableHTTPClientTransport(new URL(proxy.url), auth));
    expect(mcp.getProtocolEra()).toBe('legacy');
    expect(mcp.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['calc.add']);
    for (let i = 0; i < 3; i++)
      expect((await mcp.callTool({ name: 'calc.add', arguments: { a: 1, b: i } })).structuredContent).toEqual({
        sum: 1 + i,
      });
    expect(new Set(proxy.order)).toEqual(new Set([0, 1]));
    expect(Math.abs(proxy.counts[0] - proxy.counts[1])).toBeLessThanOrEqual(1);
  }, 120_000);

  it('the v1 SDK client works too; a request without the token is refused by either instance', async () => {
    const proxy = await farm();
    const mcp = new V1Client({ name: 'farm-v1', version: '1.0.0' });
    onTestFinished(() => mcp.close());
    await mcp.connect(new V1Transport(new URL(proxy.url), auth));
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['calc.add']);
    expect((await mcp.callTool({ name: 'calc.add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({
      sum: 5,
    });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(proxy.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      await res.body?.cancel();
    }
  }, 120_000);

  it('without --stateless the same proxy breaks a 2025-era host: its session lives on one instance only', async () => {
    const proxy = await farm([]);
    const mcp = new Client({ name: 'farm-sessions', version: '1.0.0' });
    onTestFinished(() => mcp.close());
    const outcome = await mcp
      .connect(new StreamableHTTPClientTransport(new URL(proxy.url), auth))
      .then(() => mcp.listTools())
      .then(
        () => 'worked',
        (error: Error) => error.message,
      );
    expect(outcome).toMatch(/session not found|404/i);
  }, 120_000);
});
