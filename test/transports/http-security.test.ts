import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CallTemplateBase, JsonObject } from '../../src/core/types.js';
import type { HttpCallTemplate, SseCallTemplate, StreamableHttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { createSseTransport } from '../../src/transports/sse/index.js';
import { createStreamableHttpTransport } from '../../src/transports/streamable-http/index.js';
import {
  callOptions,
  makeTool,
  remoteTestContext,
  remoteUrl,
  testContext,
  type TestContext,
} from '../fixtures/http/harness.js';
import {
  deferred,
  json,
  startHttpsServer,
  startServer,
  type Handler,
  type TestServer,
} from '../fixtures/http/server.js';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

async function httpsServer(handler: Handler): Promise<TestServer> {
  const s = await startHttpsServer(handler);
  onTestFinished(() => s.close());
  return s;
}

const http = (url: string, more: Partial<HttpCallTemplate> = {}): HttpCallTemplate => ({
  call_template_type: 'http',
  url,
  ...more,
});

function call(ctx: TestContext, template: HttpCallTemplate, args: JsonObject = {}) {
  return createHttpTransport(ctx).callTool(makeTool('t', template), args, template, callOptions(template));
}

function discover(ctx: TestContext, template: HttpCallTemplate) {
  return createHttpTransport(ctx).registerManual(template, callOptions(template));
}

function redirectTo(
  location: string | ((req: { url?: string }) => string),
  status = 302,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    res.writeHead(status, { location: typeof location === 'function' ? location(req) : location });
    res.end();
  };
}

const MANUAL = { utcp_version: '1.0.0', manual_version: '1.0.0', tools: [] };

describe('URL policy on every HTTP-family entry point (before any I/O)', () => {
  const rejected = [
    'http://169.254.169.254/latest/meta-data/',
    'http://internal.service.local',
    'http://10.0.0.5',
    'http://example.com',
    'http://localhost.evil.com',
    'http://127.0.0.1.attacker.example',
    'file:///etc/passwd',
    'ftp://example.com',
    'javascript:alert(1)',
    '',
    'not-a-url',
    'http://0.0.0.0',
    'https://u:p@example.com',
    'ws://localhost/x',
  ];

  it.each(rejected)('http discovery rejects %j with "manual discovery"', async (url) => {
    await expect(discover(testContext(), http(url))).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringMatching(/manual discovery.*HTTPS or be a literal loopback address/),
    });
  });

  it.each(rejected)('http calls reject %j with "tool invocation"', async (url) => {
    await expect(call(testContext(), http(url))).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringContaining('tool invocation'),
    });
  });

  it('checks the URL after path substitution', async () => {
    await expect(call(testContext(), http('http://{host}/x'), { host: '10.0.0.5' })).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
  });

  it('sse and streamable_http check discovery and call URLs', async () => {
    const sse: SseCallTemplate = { call_template_type: 'sse', url: 'http://10.0.0.5/e' };
    const sh: StreamableHttpCallTemplate = { call_template_type: 'streamable_http', url: 'http://10.0.0.5/e' };
    const ctx = testContext();
    await expect(createSseTransport(ctx).registerManual(sse, callOptions(sse))).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
    await expect(createSseTransport(ctx).callTool(makeTool('s', sse), {}, sse, callOptions(sse))).rejects.toMatchObject(
      { code: 'URL_POLICY' },
    );
    await expect(createStreamableHttpTransport(ctx).registerManual(sh, callOptions(sh))).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
    await expect(
      createStreamableHttpTransport(ctx).callTool(makeTool('s', sh), {}, sh, callOptions(sh)),
    ).rejects.toMatchObject({ code: 'URL_POLICY' });
  });

  it('never puts userinfo or the query string in the message', async () => {
    const error = (await call(testContext(), http('http://10.0.0.5/x?token=QSECRET')).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain('http://10.0.0.5/x');
    expect(error.message).not.toContain('QSECRET');
  });
});

describe('redirects', () => {
  it('follows loopback → loopback redirects on discovery', async () => {
    const target = await server((_req, res) => json(res, MANUAL));
    const start = await server(redirectTo(`${target.url}/manual`));
    await expect(discover(testContext(), http(`${start.url}/utcp`))).resolves.toMatchObject({ manual: MANUAL });
    expect(target.requests[0].url).toBe('/manual');
  });

  it('rejects a redirect to a metadata address as "(redirect target)", on discovery and on calls', async () => {
    const evil = await server(redirectTo('http://169.254.169.254/latest/meta-data/'));
    await expect(discover(testContext(), http(evil.url))).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringContaining('manual discovery (redirect target)'),
    });
    await expect(call(testContext(), http(evil.url))).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringContaining('tool invocation (redirect target)'),
    });
  });

  it('forwards only the safe allow-list on a cross-origin hop: Authorization, Cookie, X-Password and X-Trace-Id stay behind', async () => {
    const other = await server((_req, res) => json(res, 'ok'));
    const start = await server(redirectTo(`${other.url}/landing`));
    await call(
      testContext(),
      http(`${start.url}/a`, {
        headers: {
          Authorization: 'Bearer A',
          Cookie: 'c=1',
          'X-Api-Key': 'k',
          'X-MyApp-Token': 't',
          'X-Trace-Id': 'trace-1',
          'X-Password': 'hunter2',
          Accept: 'application/json',
          'User-Agent': 'ua/1',
        },
      }),
    );
    expect(start.requests[0].headers).toMatchObject({
      authorization: 'Bearer A',
      cookie: 'c=1',
      'x-api-key': 'k',
      'x-myapp-token': 't',
      'x-password': 'hunter2',
    });
    const h = other.requests[0].headers;
    expect(h.authorization).toBeUndefined();
    expect(h.cookie).toBeUndefined();
    expect(h['x-api-key']).toBeUndefined();
    expect(h['x-myapp-token']).toBeUndefined();
    expect(h['x-password']).toBeUndefined();
    expect(h['x-trace-id']).toBeUndefined();
    expect(h.accept).toBe('application/json');
    expect(h['user-agent']).toBe('ua/1');
  });

  it('strips an auth header with an innocent-looking name (api_key var_name X-MyApp) cross-origin only', async () => {
    const other = await server((_req, res) => json(res, 'ok'));
    const start = await server((req, res) =>
      req.url === '/same'
        ? redirectTo('/final')(req, res)
        : req.url === '/cross'
          ? redirectTo(`${other.url}/final`)(req, res)
          : json(res, 'ok'),
    );
    const auth = { auth_type: 'api_key' as const, api_key: 'secret-k', var_name: 'X-MyApp' };
    await call(testContext(), http(`${start.url}/same`, { auth }));
    await call(testContext(), http(`${start.url}/cross`, { auth }));
    expect(start.requests.find((r) => r.url === '/final')?.headers['x-myapp']).toBe('secret-k');
    expect(other.requests[0].headers['x-myapp']).toBeUndefined();
  });

  it('keeps Authorization on a same-origin hop, also with the origin spelled out in Location', async () => {
    const s = await server((req, res) => {
      if (req.url === '/rel') return redirectTo('/abs')(req, res);
      if (req.url === '/abs') return redirectTo(`http://127.0.0.1:${s.port}/end`)(req, res);
      json(res, 'ok');
    });
    await call(testContext(), http(`${s.url}/rel`, { auth: { auth_type: 'basic', username: 'u', password: 'p' } }));
    expect(s.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/rel', 'Basic dTpw'],
      ['/abs', 'Basic dTpw'],
      ['/end', 'Basic dTpw'],
    ]);
  });

  it('drops the body on a cross-origin 307 (a client_secret is not forwarded)', async () => {
    const other = await server((_req, res) => json(res, 'ok'));
    const start = await server(redirectTo(`${other.url}/token`, 307));
    await call(testContext(), http(`${start.url}/token`, { http_method: 'POST' }), { body: { client_secret: 'CS' } });
    expect(start.requests[0].body).toContain('CS');
    expect(other.requests[0].method).toBe('POST');
    expect(other.requests[0].body).toBe('');
    expect(other.requests[0].headers['content-type']).toBeUndefined();
  });

  it('keeps method and body on a same-origin 307/308', async () => {
    const s = await server((req, res) =>
      req.url === '/a'
        ? redirectTo('/b', 307)(req, res)
        : req.url === '/b'
          ? redirectTo('/c', 308)(req, res)
          : json(res, 'ok'),
    );
    await call(testContext(), http(`${s.url}/a`, { http_method: 'PUT' }), { body: { x: 1 } });
    expect(s.requests.map((r) => [r.method, r.body])).toEqual([
      ['PUT', '{"x":1}'],
      ['PUT', '{"x":1}'],
      ['PUT', '{"x":1}'],
    ]);
  });

  it('switches to GET without a body on 303', async () => {
    const s = await server((req, res) =>
      req.url?.startsWith('/a') ? redirectTo('/b', 303)(req, res) : json(res, 'ok'),
    );
    await call(testContext(), http(`${s.url}/a`, { http_method: 'POST' }), { body: { x: 1 } });
    expect(s.requests[1]).toMatchObject({ method: 'GET', url: '/b', body: '' });
    expect(s.requests[1].headers['content-type']).toBeUndefined();
  });

  it('never re-appends the original query (or an auth query parameter) to the next URL', async () => {
    const s = await server((req, res) => (req.url?.startsWith('/a') ? redirectTo('/b')(req, res) : json(res, 'ok')));
    await call(
      testContext(),
      http(`${s.url}/a`, { auth: { auth_type: 'api_key', api_key: 'QK', var_name: 'key', location: 'query' } }),
      { q: 1 },
    );
    expect(s.requests.map((r) => r.url)).toEqual(['/a?q=1&key=QK', '/b']);
  });

  it('fails a redirect loop with "Too many redirects" after max_redirects hops', async () => {
    const s = await server(redirectTo((req) => (req.url === '/a' ? '/b' : '/a')));
    const ctx = testContext();
    await expect(call(ctx, http(`${s.url}/a`))).rejects.toMatchObject({
      code: 'TRANSPORT_FAILED',
      message: expect.stringContaining('Too many redirects'),
    });
    expect(s.requests).toHaveLength(ctx.limits.max_redirects + 1);
  });

  it('treats a 3xx without Location as the final response', async () => {
    const s = await server((_req, res) => {
      res.writeHead(300, { 'content-type': 'text/plain' });
      res.end('choices');
    });
    await expect(call(testContext(), http(s.url))).resolves.toBe('choices');
  });
});

describe('remote → loopback rule', () => {
  it('refuses a redirect from a remote origin to a loopback address, without sending the query there', async () => {
    const local = await server((_req, res) => json(res, 'reached'));
    const remote = await httpsServer(redirectTo(`${local.url}/steal`));
    const ctx = remoteTestContext();
    const template = http(remoteUrl('api', remote.port, '/x'), {
      auth: { auth_type: 'api_key', api_key: 'QK', var_name: 'key', location: 'query' },
    });
    await expect(call(ctx, template)).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringContaining('loopback'),
    });
    await expect(discover(ctx, template)).rejects.toMatchObject({
      code: 'URL_POLICY',
      message: expect.stringContaining('redirect target'),
    });
    expect(remote.requests[0].url).toBe('/x?key=QK');
    expect(local.requests).toHaveLength(0);
  });

  it('follows remote → remote cross-origin redirects without the original query or auth headers', async () => {
    const target = await httpsServer((_req, res) => json(res, 'ok'));
    const start = await httpsServer(redirectTo(remoteUrl('other', target.port, '/landing')));
    const template = http(remoteUrl('api', start.port, '/x'), {
      auth: { auth_type: 'api_key', api_key: 'QK', var_name: 'key', location: 'query' },
      headers: { 'X-Api-Key': 'H' },
    });
    await expect(call(remoteTestContext(), template, { q: 'v' })).resolves.toBe('ok');
    expect(target.requests[0].url).toBe('/landing');
    expect(target.requests[0].headers['x-api-key']).toBeUndefined();
    expect(target.requests[0].headers.host).toBe(`other.example.test:${target.port}`);
  });

  it('drops discovered tools that target loopback hosts from a remote manual, with a warning', async () => {
    const remote = await httpsServer((_req, res) =>
      json(res, {
        utcp_version: '1.0.0',
        manual_version: '1',
        tools: [
          { name: 'ok', tool_call_template: { call_template_type: 'http', url: 'https://api.example.test/ok' } },
          { name: 'local', tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:9090/x' } },
          { name: 'mapped', tool_call_template: { call_template_type: 'sse', url: 'https://[::ffff:127.0.0.1]/x' } },
          { name: 'tcp', tool_call_template: { call_template_type: 'tcp', host: 'localhost', port: 1 } },
          {
            name: 'token',
            tool_call_template: {
              call_template_type: 'http',
              url: 'https://api.example.test/t',
              auth: { auth_type: 'oauth2', token_url: 'http://127.0.0.1/token', client_id: 'a', client_secret: 'b' },
            },
          },
          { name: 'legacy', tool_provider: { provider_type: 'http', url: 'http://localhost:8080/x' } },
        ],
      }),
    );
    const template = http(remoteUrl('api', remote.port, '/utcp'));
    const result = await discover(remoteTestContext(), template);
    expect((result.manual as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(['ok']);
    expect(result.warnings?.filter((w) => w.startsWith('Dropped tool'))).toHaveLength(5);
    expect(result.warnings?.join('\n')).toMatch(/Dropped tool local: .*loopback/);
  });

  it('keeps loopback tools from a loopback manual', async () => {
    const s = await server((_req, res) =>
      json(res, {
        tools: [{ name: 'local', tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:9/x' } }],
      }),
    );
    const result = await discover(testContext(), http(s.url));
    expect((result.manual as { tools: unknown[] }).tools).toHaveLength(1);
    expect(result.warnings ?? []).toEqual([]);
  });
});

describe('header injection', () => {
  it.each(['v\r\nX-Injected: yes', 'v\nX-Injected: yes', 'v\rX-Injected: yes'])(
    'rejects a header_fields argument value %j before sending',
    async (value) => {
      const s = await server((_req, res) => json(res, 'ok'));
      const error = (await call(testContext(), http(s.url, { header_fields: ['X-User'] }), { 'X-User': value }).catch(
        (e: unknown) => e,
      )) as Error;
      expect(error).toMatchObject({ code: 'HEADER_INJECTION', message: expect.stringContaining('CR/LF') });
      expect(error.message).toContain('X-User');
      expect(error.message).not.toContain('Injected');
      expect(s.requests).toHaveLength(0);
    },
  );

  it('rejects CR/LF in a static header and in an api_key var_name on discovery', async () => {
    const s = await server((_req, res) => json(res, MANUAL));
    await expect(discover(testContext(), http(s.url, { headers: { 'X-A': 'a\r\nX-B: b' } }))).rejects.toMatchObject({
      code: 'HEADER_INJECTION',
    });
    await expect(
      discover(
        testContext(),
        http(s.url, { auth: { auth_type: 'api_key', api_key: 'k', var_name: 'X-Api-Key\r\nX-Injected: yes' } }),
      ),
    ).rejects.toMatchObject({
      code: 'HEADER_INJECTION',
    });
    expect(s.requests).toHaveLength(0);
  });

  it('rejects a header name that is not an HTTP token', async () => {
    const s = await server((_req, res) => json(res, 'ok'));
    await expect(
      call(testContext(), http(s.url, { header_fields: ['Bad Name'] }), { 'Bad Name': 'x' }),
    ).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
  });

  it('rejects a cookie_fields value that would inject another cookie', async () => {
    const s = await server((_req, res) => json(res, 'ok'));
    await expect(
      call(testContext(), http(s.url, { cookie_fields: ['pref'] }), { pref: 'x; admin=true' }),
    ).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
    expect(s.requests).toHaveLength(0);
  });
});

describe('abort and timeout', () => {
  it('fails with TIMEOUT after the template timeout when the server never answers', async () => {
    const s = await server(() => {});
    await expect(call(testContext(), http(s.url, { timeout: 100 }))).rejects.toMatchObject({
      code: 'TIMEOUT',
      timeoutMs: 100,
      message: expect.stringContaining('demo.t'),
    });
  });

  it('fails with TIMEOUT when the body stalls past the template timeout', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    await expect(call(testContext(), http(s.url, { timeout: 100 }))).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('fails with ABORTED when the caller aborts, and the server sees the request closed', async () => {
    const arrived = deferred();
    const closed = deferred();
    const s = await server((req) => {
      req.socket.on('close', () => closed.resolve());
      arrived.resolve();
    });
    const controller = new AbortController();
    const template = http(s.url);
    const pending = createHttpTransport(testContext()).callTool(
      makeTool('t', template),
      {},
      template,
      callOptions(template, { signal: controller.signal }),
    );
    await arrived.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    await closed.promise;
  });

  it('reports the caller deadline as TIMEOUT', async () => {
    const s = await server(() => {});
    const template = http(s.url);
    const pending = createHttpTransport(testContext()).callTool(
      makeTool('t', template),
      {},
      template,
      callOptions(template, { signal: AbortSignal.timeout(80), timeoutMs: 80 }),
    );
    await expect(pending).rejects.toMatchObject({ code: 'TIMEOUT', timeoutMs: 80 });
  });

  it('discovery honours the caller signal', async () => {
    const s = await server(() => {});
    const template = http(s.url);
    await expect(
      createHttpTransport(testContext()).registerManual(
        template,
        callOptions(template as CallTemplateBase, { signal: AbortSignal.timeout(80) }),
      ),
    ).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });
});
