/**
 * What the bridge advertises as output schemas it can keep (docs/design/transports.md#mcp-bridge-output-schemas),
 * judged by the official MCP SDK client, which validates structuredContent against outputSchema: a closed object
 * (`additionalProperties: false`, as NSwag writes it) and an API answering one field more; a `format` hosts do not
 * know (`guid`); and a result that still breaks the schema, which arrives as a tool error carrying the data.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it, onTestFinished, vi } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { serveMcp } from '../../src/mcp/serve-mcp.js';

let api: ReturnType<typeof createServer>;
let base = '';

beforeAll(async () => {
  api = createServer((req, res) => {
    req.resume();
    const body =
      req.url === '/key'
        ? {
            id: '0f8fad5b-d9cb-469f-a165-70867728950e',
            kty: 'RSA',
            kid: 'k1',
            n: 'sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri',
            e: 'AQAB',
          }
        : { count: 'many' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => api.close(() => r())));

function tool(name: string, path: string, outputs: Record<string, unknown>) {
  return {
    name,
    description: name,
    inputs: { type: 'object', properties: {} },
    outputs,
    tool_call_template: { call_template_type: 'http', url: `${base}${path}`, http_method: 'GET' },
  };
}

it('a host enforcing outputSchema keeps results with extra fields and sees no unknown formats; a real mismatch is a readable tool error', async () => {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const manual = {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      tool('get_key', '/key', {
        type: 'object',
        additionalProperties: false,
        properties: { id: { type: 'string', format: 'guid' }, kty: { type: 'string' }, kid: { type: 'string' } },
        required: ['kty'],
      }),
      tool('count', '/count', { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] }),
    ],
  };
  const r = await client.registerManual({
    name: 'jwks',
    call_template_type: 'text',
    content: JSON.stringify(manual),
    allowed_communication_protocols: ['http'],
  });
  expect(r.success, r.errors.join('; ')).toBe(true);
  const handle = await serveMcp(client, { transport: 'http' });
  onTestFinished(() => handle.close());
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  onTestFinished(() => warn.mockRestore());
  const host = new Client({ name: 'strict-host', version: '1.0.0' });
  await host.connect(
    new StreamableHTTPClientTransport(new URL(handle.url!), {
      requestInit: { headers: { authorization: `Bearer ${handle.token}` } },
    }),
  );
  onTestFinished(() => host.close());
  const { tools } = await host.listTools();
  const key = tools.find((t) => t.name.endsWith('get_key'))!;
  expect(key.outputSchema).toMatchObject({ type: 'object', properties: { id: { type: 'string' } } });
  expect(JSON.stringify(key.outputSchema)).not.toContain('guid');
  expect(key.outputSchema).not.toHaveProperty('additionalProperties');

  // The API answers n and e, which the schema never listed: the host validates and keeps the result.
  const got = await host.callTool({ name: key.name, arguments: {} });
  expect(got.isError).toBeFalsy();
  expect(got.structuredContent).toMatchObject({ kty: 'RSA', n: expect.any(String), e: 'AQAB' });

  // A result that really breaks the schema is not thrown away by the host: it is a tool error with the data.
  const count = tools.find((t) => t.name.endsWith('count'))!;
  const bad = await host.callTool({ name: count.name, arguments: {} });
  expect(bad.isError).toBe(true);
  const text = (bad.content as Array<{ text: string }>).map((c) => c.text).join('\n');
  expect(text).toMatch(/does not match this tool's output schema \(\/count: must be integer\)/);
  expect(text).toContain('"many"');
  expect(warn.mock.calls.flat().join(' ')).not.toMatch(/unknown format/);
});
