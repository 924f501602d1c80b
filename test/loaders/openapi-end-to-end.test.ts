/**
 * Converted tools driven through the real client and http transport against a local server that
 * serves both the spec (with a relative server URL) and the API: asserts what the server received.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const spec = {
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  servers: [{ url: '/api/v1' }],
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer' },
      queryKey: { type: 'apiKey', in: 'query', name: 'key' },
    },
    schemas: {
      Item: { type: 'object', properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/Item' } } },
    },
  },
  security: [{ bearerAuth: [] }],
  paths: {
    '/items/{itemId}': {
      parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: 'getItem',
        parameters: [
          { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
          { name: 'X-Request-Id', in: 'header', schema: { type: 'string' } },
          { name: 'session', in: 'cookie', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
        },
      },
    },
    '/items': {
      post: {
        operationId: 'createItem',
        security: [{ bearerAuth: [], queryKey: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/forms': {
      post: {
        security: [],
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } } },
            },
          },
        },
        responses: { '204': { description: 'ok' } },
      },
    },
  },
};

describe('converted tools through UtcpClient and the http transport', () => {
  const received: Received[] = [];
  let base = '';
  let client: UtcpClient;
  let server: ReturnType<typeof createServer>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        if (req.url === '/openapi.json') {
          res.writeHead(200, { 'content-type': 'text/plain' }); // Content-Type is not trusted
          res.end(JSON.stringify(spec));
          return;
        }
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = await UtcpClient.create({ variables: { shop_BEARER_AUTH: 'tok-1', shop_QUERY_KEY: 'k-2' } });
    const registration = await client.registerManual({
      name: 'shop',
      call_template_type: 'http',
      url: `${base}/openapi.json`,
    });
    expect(registration.success, registration.errors.join('; ')).toBe(true);
  });

  afterAll(async () => {
    await client?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('registers every operation under the manual name', async () => {
    const names = (await client.getTools()).map((t) => t.name).sort();
    expect(names).toEqual(['shop.createItem', 'shop.getItem', 'shop.post_forms']);
  });

  it('sends path, query, header and cookie arguments and the bearer token', async () => {
    await expect(
      client.callTool('shop.getItem', { itemId: 'a/b', verbose: true, 'X-Request-Id': 'r1', session: 's1' }),
    ).resolves.toEqual({ ok: true });
    const r = received.at(-1)!;
    expect(r.method).toBe('GET');
    expect(r.url).toBe('/api/v1/items/a%2Fb?verbose=true');
    expect(r.headers.authorization).toBe('Bearer tok-1');
    expect(r.headers['x-request-id']).toBe('r1');
    expect(r.headers.cookie).toBe('session=s1');
  });

  it('sends a JSON body and both schemes of an AND-ed requirement', async () => {
    await client.callTool('shop.createItem', { body: { name: 'x', parent: { name: 'y' } } });
    const r = received.at(-1)!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/api/v1/items?key=k-2');
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers.authorization).toBe('Bearer tok-1');
    expect(JSON.parse(r.body)).toEqual({ name: 'x', parent: { name: 'y' } });
  });

  it('sends a form body as application/x-www-form-urlencoded, without auth for security: []', async () => {
    await client.callTool('shop.post_forms', { body: { a: 1, b: 'two words' } });
    const r = received.at(-1)!;
    expect(r.url).toBe('/api/v1/forms');
    expect(r.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(new URLSearchParams(r.body).get('b')).toBe('two words');
    expect(r.headers.authorization).toBeUndefined();
  });

  it('stores raw ${VAR} references, never the secrets', async () => {
    const tool = await client.getTool('shop.createItem');
    expect(JSON.stringify(tool)).not.toContain('tok-1');
    expect(JSON.stringify(tool)).not.toContain('k-2');
    expect(tool!.tool_call_template).toMatchObject({
      url: `${base}/api/v1/items?key=\${QUERY_KEY}`,
      auth: { api_key: 'Bearer ${BEARER_AUTH}' },
    });
  });

  it('validates arguments against the generated inputs (required body)', async () => {
    await expect(client.callTool('shop.createItem', {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });
});
