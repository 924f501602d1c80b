import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { HttpStatusError } from '../../src/core/errors.js';
import type { OpenApiConverter } from '../../src/core/transport.js';
import type { HttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { callOptions, testContext, type TestContext } from '../fixtures/http/harness.js';
import { json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

const http = (url: string, more: Partial<HttpCallTemplate> = {}): HttpCallTemplate => ({
  call_template_type: 'http',
  url,
  ...more,
});

function discover(ctx: TestContext, template: HttpCallTemplate, raw: HttpCallTemplate = template) {
  return createHttpTransport(ctx).registerManual(template, callOptions(raw));
}

function text(body: string | Buffer, type = 'application/json'): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  };
}

const TOOL = {
  name: 'echo',
  description: 'Echo',
  inputs: { type: 'object' },
  outputs: {},
  tags: [],
  tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:1/echo' },
};

describe('http discovery', () => {
  it('returns a UTCP manual fetched with the template method, headers and auth, and no body', async () => {
    const s = await server((_req, res) => json(res, { utcp_version: '1.0.1', manual_version: '2', tools: [TOOL] }));
    const result = await discover(
      testContext(),
      http(`${s.url}/utcp?v=1`, {
        http_method: 'POST',
        headers: { 'X-H': 'h' },
        auth: { auth_type: 'api_key', api_key: 'k', location: 'query', var_name: 'key' },
      }),
    );
    expect(result.manual).toEqual({ utcp_version: '1.0.1', manual_version: '2', tools: [TOOL] });
    expect(result.openapi).toBeUndefined();
    expect(s.requests[0]).toMatchObject({ method: 'POST', url: '/utcp?v=1&key=k', body: '' });
    expect(s.requests[0].headers['x-h']).toBe('h');
  });

  it('parses YAML manuals', async () => {
    const s = await server(
      text(
        'tools:\n  - name: echo\n    tool_call_template:\n      call_template_type: http\n      url: http://127.0.0.1:1/e\n',
        'application/yaml',
      ),
    );
    const result = await discover(testContext(), http(s.url));
    expect(result.manual).toMatchObject({
      tools: [{ name: 'echo', tool_call_template: { url: 'http://127.0.0.1:1/e' } }],
    });
  });

  it('strips a UTF-8 BOM', async () => {
    const s = await server(
      text(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ tools: [] }))])),
    );
    await expect(discover(testContext(), http(s.url))).resolves.toMatchObject({ manual: { tools: [] } });
  });

  it('decides by a tools array, not by utcp_version, and normalises legacy manuals', async () => {
    const s = await server((_req, res) =>
      json(res, {
        version: '0.1.0',
        tools: [
          {
            name: 'old',
            parameters: { type: 'object' },
            tool_provider: { provider_type: 'http', url: 'http://127.0.0.1:1/x' },
          },
        ],
      }),
    );
    const result = await discover(testContext(), http(s.url));
    expect(result.manual).toMatchObject({
      utcp_version: '0.1.0',
      tools: [{ name: 'old', inputs: { type: 'object' }, tool_call_template: { call_template_type: 'http' } }],
    });
  });

  it('rejects a YAML alias bomb', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'tools: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    ].join('\n');
    const s = await server(text(bomb, 'application/yaml'));
    await expect(discover(testContext(), http(s.url))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('rejects a document larger than max_document_bytes, declared or streamed', async () => {
    const declared = await server(text(JSON.stringify({ tools: [], pad: 'x'.repeat(5000) })));
    const streamed = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"tools": [], "pad": "');
      res.write('x'.repeat(5000));
      res.end('"}');
    });
    const ctx = testContext();
    ctx.limits.max_document_bytes = 1000;
    await expect(discover(ctx, http(declared.url))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
    await expect(discover(ctx, http(streamed.url))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('hands OpenAPI documents to the converter with the final URL, raw auth_tools, filter and limits', async () => {
    const spec = { openapi: '3.0.0', info: { title: 't', version: '1' }, paths: {} };
    const target = await server((_req, res) => json(res, spec));
    const start = await server((_req, res) => {
      res.writeHead(301, { location: `${target.url}/openapi.json` });
      res.end();
    });
    const convert = vi.fn<OpenApiConverter>(async () => ({ manual: { tools: [] }, warnings: ['w1'] }));
    const ctx = testContext({ convertOpenApi: convert });
    const filter = { include_tags: ['pets'] };
    const raw = http(`${start.url}/spec`, {
      auth_tools: { auth_type: 'api_key', api_key: '${API_KEY}' },
      openapi_filter: filter,
    });
    const substituted = { ...raw, auth_tools: { auth_type: 'api_key' as const, api_key: 'resolved-secret' } };
    const result = await discover(ctx, substituted, raw);
    expect(result).toEqual({ manual: { tools: [] }, warnings: ['w1'], openapi: true, remoteSource: false });
    expect(convert).toHaveBeenCalledOnce();
    const [doc, options] = convert.mock.calls[0];
    expect(doc).toEqual(spec);
    expect(options).toMatchObject({
      manualName: 'demo',
      specUrl: `${target.url}/openapi.json`,
      authTools: { api_key: '${API_KEY}' },
      filter,
      limits: ctx.limits,
    });
    expect(JSON.stringify(options)).not.toContain('resolved-secret');
  });

  it('recognises swagger and paths-only documents as OpenAPI', async () => {
    const s = await server((req, res) => json(res, req.url === '/a' ? { swagger: '2.0' } : { paths: {} }));
    const convert = vi.fn<OpenApiConverter>(async () => ({ manual: { tools: [] }, warnings: [] }));
    const ctx = testContext({ convertOpenApi: convert });
    await discover(ctx, http(`${s.url}/a`));
    await discover(ctx, http(`${s.url}/b`));
    expect(convert).toHaveBeenCalledTimes(2);
  });

  it('fails for a document that is neither a manual nor OpenAPI', async () => {
    const s = await server((_req, res) => json(res, { hello: 'world' }));
    await expect(discover(testContext(), http(s.url))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('fails for unparsable text', async () => {
    const s = await server(text('{"tools": [', 'text/plain'));
    await expect(discover(testContext(), http(s.url))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('fails with HttpStatusError for status >= 400', async () => {
    const s = await server((_req, res) => json(res, { error: 'x' }, 403));
    const error = await discover(testContext(), http(s.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 403 });
  });

  it('retries once with a fresh OAuth2 token after a 401', async () => {
    let issued = 0;
    const s = await server((req, res) => {
      if (req.url === '/token') return json(res, { access_token: `tok-${++issued}` });
      return req.headers.authorization === 'Bearer tok-2' ? json(res, { tools: [] }) : json(res, {}, 401);
    });
    const template = http(`${s.url}/utcp`, {
      auth: { auth_type: 'oauth2', token_url: `${s.url}/token`, client_id: 'c', client_secret: 's' },
    });
    await expect(discover(testContext(), template)).resolves.toMatchObject({ manual: { tools: [] } });
    expect(s.requests.map((r) => r.url)).toEqual(['/token', '/utcp', '/token', '/utcp']);
  });
});

describe('http transport lifecycle', () => {
  it('keeps connections alive between calls and closes every socket when the client closes', async () => {
    const ports = new Set<number | undefined>();
    const s = await server((req, res) => {
      ports.add(req.socket.remotePort);
      json(res, { tools: [] });
    });
    const ctx = testContext();
    const transport = createHttpTransport(ctx);
    for (let i = 0; i < 6; i++) await transport.registerManual(http(s.url), callOptions(http(s.url)));
    expect(s.requests).toHaveLength(6);
    expect(ports.size).toBeLessThanOrEqual(2);
    expect(s.openSockets.size).toBeGreaterThan(0);
    await transport.close();
    await transport.close();
    await ctx.disposeShared();
    await s.allSocketsClosed();
    expect(s.openSockets.size).toBe(0);
  });

  it('uses one dispatcher per client: two clients open separate connections', async () => {
    const s = await server((_req, res) => json(res, { tools: [] }));
    const a = testContext();
    const b = testContext();
    await createHttpTransport(a).registerManual(http(s.url), callOptions(http(s.url)));
    const afterA = s.openSockets.size;
    await createHttpTransport(b).registerManual(http(s.url), callOptions(http(s.url)));
    expect(s.openSockets.size).toBe(afterA + 1);
    await a.disposeShared();
    await expect(createHttpTransport(b).registerManual(http(s.url), callOptions(http(s.url)))).resolves.toBeTruthy();
  });
});
