/**
 * docs/design/threat-model.md#openapi-expansion. A small OpenAPI spec served over HTTP (about 700 KB:
 * 2,500 operations sharing a mutually referencing $ref graph of 400 schemas) made the converter expand
 * the graph per operation until a 1 GiB heap ran out. Registered through the public API, it now fails
 * with an error naming the per-document limit, fast and within bounded memory, and the host goes on.
 */
import { createServer } from 'node:http';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from './packed.js';

function hostileSpec(operations: number, definitions: number): Record<string, unknown> {
  const ref = (i: number) => ({ $ref: `#/components/schemas/S${i % definitions}` });
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < definitions; i++)
    schemas[`S${i}`] = {
      type: 'object',
      properties: {
        left: ref(i + 1),
        right: ref(i * 11 + 7),
        list: { type: 'array', items: ref(i * 17 + 3) },
        label: { type: 'string' },
      },
    };
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++)
    paths[`/r${i}`] = {
      post: {
        operationId: `op${i}`,
        requestBody: { content: { 'application/json': { schema: ref(i) } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: ref(i + 2) } } } },
      },
    };
  return {
    openapi: '3.0.3',
    info: { title: 'hostile', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths,
    components: { schemas },
  };
}

it('a 700 KB spec with a shared, mutually referencing $ref graph fails registration by a named limit, in bounded memory', async () => {
  const body = JSON.stringify(hostileSpec(2500, 400));
  expect(body.length).toBeLessThan(800_000);
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as { port: number };
  const client = await UtcpClient.create();
  onTestFinished(() => client.close());
  const heapBefore = process.memoryUsage().heapUsed;
  const result = await client.registerManual({
    name: 'spec',
    call_template_type: 'http',
    url: `http://127.0.0.1:${port}/openapi.json`,
    http_method: 'GET',
  });
  expect(result.success).toBe(false);
  expect(result.errors.join(' ')).toContain('limits.max_openapi_expansion_factor');
  expect(result.manual.tools).toEqual([]);
  expect(await client.getTools()).toEqual([]); // nothing half-registered
  // The attack needed more than 1 GiB; the bounded conversion stays far below.
  expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(300 * 1024 * 1024);
  // The host goes on: the same client still registers and serves a sane manual.
  const ok = await client.registerManual({
    name: 'ok',
    call_template_type: 'text',
    content: JSON.stringify({
      tools: [
        { name: 't', inputs: { type: 'object' }, tool_call_template: { call_template_type: 'text', content: '{}' } },
      ],
    }),
  });
  expect(ok.errors).toEqual([]);
});
