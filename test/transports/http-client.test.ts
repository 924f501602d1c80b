import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { deferred, json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

const SECRET = 'sekret-value-9f3a';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

async function client(options: { timeoutMs?: number } = {}) {
  const c = await UtcpClient.create({ variables: { demo_API_KEY: SECRET } }, { timeoutMs: options.timeoutMs });
  onTestFinished(() => c.close());
  return c;
}

/** A UTCP manual whose tools call this same server with the manual's API key. */
function manualFor(base: string) {
  const auth = { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-Api-Key' };
  return {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'echo',
        description: 'Echoes the body',
        inputs: { type: 'object', properties: { body: { type: 'object' }, q: { type: 'string' } } },
        outputs: { type: 'object' },
        tags: ['test'],
        tool_call_template: { call_template_type: 'http', url: `${base}/echo`, http_method: 'POST', auth },
      },
      {
        name: 'fail',
        description: 'Always fails',
        inputs: { type: 'object', properties: {} },
        outputs: {},
        tags: [],
        tool_call_template: {
          call_template_type: 'http',
          url: `${base}/fail`,
          auth: { ...auth, location: 'query', var_name: 'key' },
        },
      },
    ],
  };
}

async function apiServer(): Promise<TestServer> {
  let base = '';
  const s = await server((req, res, body) => {
    if (req.url === '/utcp') return json(res, manualFor(base));
    if (req.url?.startsWith('/echo'))
      return json(res, { received: JSON.parse(body || 'null'), key: req.headers['x-api-key'] });
    if (req.url?.startsWith('/fail')) return json(res, { error: 'boom' }, 500);
    json(res, {}, 404);
  });
  base = s.url;
  return s;
}

describe('http through UtcpClient', () => {
  it('registers a manual, calls a tool with the secret on the wire, and never exposes the secret', async () => {
    const s = await apiServer();
    const c = await client();
    const result = await c.registerManual({
      name: 'demo',
      call_template_type: 'http',
      url: `${s.url}/utcp`,
      auth: { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-Api-Key' },
    });
    expect(result.success).toBe(true);
    expect(s.requests[0].headers['x-api-key']).toBe(SECRET);

    await expect(c.callTool('demo.echo', { body: { x: 1 }, q: 'hi' })).resolves.toEqual({
      received: { x: 1 },
      key: SECRET,
    });
    expect(s.requests[1].url).toBe('/echo?q=hi');

    const tool = await c.getTool('demo.echo');
    expect(tool?.tool_call_template).toMatchObject({ auth: { api_key: '${API_KEY}' } });
    const exposed = JSON.stringify([result, await c.getTools(), await c.searchTools('echo')]);
    expect(exposed).not.toContain(SECRET);
  });

  it('keeps the secret out of HTTP errors even when it travels in the query', async () => {
    const s = await apiServer();
    const c = await client();
    await c.registerManual({ name: 'demo', call_template_type: 'http', url: `${s.url}/utcp` });
    const error = (await c.callTool('demo.fail', {}).catch((e: unknown) => e)) as Error & { url: string };
    expect(error).toMatchObject({ code: 'HTTP_STATUS', status: 500, url: `${s.url}/fail` });
    expect(s.requests.at(-1)?.url).toBe(`/fail?key=${SECRET}`);
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(SECRET);
  });

  it('registers an OpenAPI spec served over HTTP and calls the generated tool', async () => {
    let base = '';
    const s = await server((req, res) => {
      if (req.url === '/openapi.json') {
        return json(res, {
          openapi: '3.0.3',
          info: { title: 'Pets', version: '1' },
          servers: [{ url: `${base}/v1` }],
          paths: {
            '/pets/{petId}': {
              get: {
                operationId: 'getPet',
                parameters: [
                  { name: 'petId', in: 'path', required: true, schema: { type: 'string' } },
                  { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
                ],
                responses: {
                  '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
                },
              },
            },
          },
        });
      }
      json(res, { pet: req.url });
    });
    base = s.url;
    const c = await client();
    const result = await c.registerManual({ name: 'pets', call_template_type: 'http', url: `${s.url}/openapi.json` });
    expect(result.errors).toEqual([]);
    expect(result.manual.tools.map((t) => t.name)).toEqual(['pets.getPet']);
    await expect(c.callTool('pets.getPet', { petId: 'a b', verbose: true })).resolves.toEqual({
      pet: '/v1/pets/a%20b?verbose=true',
    });
  });

  it('reports a failed registration for an unreachable manual URL without throwing', async () => {
    const c = await client();
    const result = await c.registerManual({ name: 'demo', call_template_type: 'http', url: 'http://10.0.0.5/utcp' });
    expect(result.success).toBe(false);
    expect(result.errors.join()).toContain('manual discovery');
  });

  it('applies the client timeout to a call that never answers', async () => {
    const s = await server((req, res) =>
      req.url === '/utcp'
        ? json(res, {
            tools: [
              {
                name: 'hang',
                inputs: {},
                outputs: {},
                description: '',
                tags: [],
                tool_call_template: {
                  call_template_type: 'http',
                  url: `http://127.0.0.1:${req.socket.localPort}/hang`,
                },
              },
            ],
          })
        : undefined,
    );
    const c = await client({ timeoutMs: 100 });
    await c.registerManual({ name: 'demo', call_template_type: 'http', url: `${s.url}/utcp` });
    await expect(c.callTool('demo.hang', {})).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('closes every socket when the client closes', async () => {
    const s = await apiServer();
    const c = await client();
    await c.registerManual({ name: 'demo', call_template_type: 'http', url: `${s.url}/utcp` });
    await c.callTool('demo.echo', {});
    expect(s.openSockets.size).toBeGreaterThan(0);
    await c.close();
    await s.allSocketsClosed();
    expect(s.openSockets.size).toBe(0);
  });
});

describe('sse and streamable_http through UtcpClient', () => {
  it('streams SSE items one by one through callToolStreaming', async () => {
    const sendRest = deferred();
    let base = '';
    const s = await server(async (req, res) => {
      if (req.url === '/utcp') {
        return json(res, {
          tools: [
            {
              name: 'ticks',
              description: '',
              inputs: {},
              outputs: {},
              tags: [],
              tool_call_template: { call_template_type: 'sse', url: `${base}/ticks` },
            },
          ],
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"tick":1}\n\n');
      await sendRest.promise;
      res.end('data: {"tick":2}\n\n');
    });
    base = s.url;
    const c = await client();
    const reg = await c.registerManual({ name: 'live', call_template_type: 'sse', url: `${s.url}/utcp` });
    expect(reg.errors).toEqual([]);
    const seen: unknown[] = [];
    for await (const item of c.callToolStreaming('live.ticks', {})) {
      seen.push(item);
      if (seen.length === 1) sendRest.resolve();
    }
    expect(seen).toEqual([{ tick: 1 }, { tick: 2 }]);
  });

  it('returns NDJSON items from a streamable_http tool through callTool', async () => {
    let base = '';
    const s = await server((req, res) => {
      if (req.url === '/utcp') {
        return json(res, {
          tools: [
            {
              name: 'rows',
              description: '',
              inputs: {},
              outputs: {},
              tags: [],
              tool_call_template: { call_template_type: 'streamable_http', url: `${base}/rows` },
            },
          ],
        });
      }
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"r":1}\n{"r":2}\n');
    });
    base = s.url;
    const c = await client();
    await c.registerManual({ name: 'data', call_template_type: 'streamable_http', url: `${s.url}/utcp` });
    await expect(c.callTool('data.rows', {})).resolves.toEqual([{ r: 1 }, { r: 2 }]);
  });
});
