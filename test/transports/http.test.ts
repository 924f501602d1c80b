import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpStatusError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/types.js';
import type { HttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { callOptions, makeTool, testContext, type TestContext } from '../fixtures/http/harness.js';
import { json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

async function server(handler: Handler = (_req, res) => json(res, { ok: true })): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

function call(ctx: TestContext, template: HttpCallTemplate, args: JsonObject = {}, extra = {}) {
  const transport = createHttpTransport(ctx);
  return transport.callTool(makeTool('t', template), args, template, callOptions(template, extra));
}

const tpl = (url: string, more: Partial<HttpCallTemplate> = {}): HttpCallTemplate => ({
  call_template_type: 'http',
  url,
  ...more,
});

describe('http tool calls: request mapping', () => {
  it('percent-encodes path parameters strictly', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/items/{id}`), { id: "a/b c!'()*~" });
    expect(s.requests[0].url).toBe('/items/a%2Fb%20c%21%27%28%29%2A~');
  });

  it('fills a placeholder that appears twice and keeps the argument out of the query', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/{id}/copy/{id}`), { id: 7 });
    expect(s.requests[0].url).toBe('/7/copy/7');
  });

  it('fails before any request when a path parameter is missing', async () => {
    const s = await server();
    await expect(call(testContext(), tpl(`${s.url}/items/{id}`), {})).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: 'Missing required path parameter: id',
    });
    expect(s.requests).toHaveLength(0);
  });

  it('sends the remaining arguments as query parameters after the existing query, in argument order', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/search?fixed=1`), {
      q: 'a b&c',
      n: 2,
      flag: true,
      skip: null,
      obj: { x: [1] },
    });
    expect(s.requests[0].url).toBe('/search?fixed=1&q=a%20b%26c&n=2&flag=true&obj=%7B%22x%22%3A%5B1%5D%7D');
  });

  it('sends array arguments as repeated query keys', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/s`), { tag: ['a', 'b', 3] });
    expect(s.requests[0].url).toBe('/s?tag=a&tag=b&tag=3');
  });

  it('sends query parameters for POST too, and the body_field as JSON', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/p`, { http_method: 'POST' }), { q: 1, body: { a: 1, b: 'x' } });
    const r = s.requests[0];
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/p?q=1');
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({ a: 1, b: 'x' });
  });

  it('sends a string body that already is JSON unchanged', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/p`, { http_method: 'POST' }), { body: '{"raw": true}' });
    expect(s.requests[0].body).toBe('{"raw": true}');
  });

  it('sends a body the schema declares a string as a JSON string, even when its text parses as JSON', async () => {
    const s = await server();
    const transport = createHttpTransport(testContext());
    const template = tpl(`${s.url}/p`, { http_method: 'PUT' });
    for (const [schema, value, wire] of [
      [{ type: 'string' }, 'true', '"true"'],
      [{ type: ['string'] }, '42', '"42"'],
      [{ enum: ['null', 'x'] }, 'null', '"null"'],
      [{ type: 'string' }, '{"a":1}', '"{\\"a\\":1}"'],
      // No string declared: a caller's serialised JSON is sent as it is.
      [{ type: 'object' }, '{"a":1}', '{"a":1}'],
      [{}, 'true', 'true'],
    ] as const) {
      const tool = { ...makeTool('t', template), inputs: { type: 'object', properties: { body: schema } } };
      await transport.callTool(tool, { body: value }, template, callOptions(template, {}));
      expect(s.requests.at(-1)!.body, JSON.stringify(schema)).toBe(wire);
      expect(JSON.parse(s.requests.at(-1)!.body)).toEqual(wire.startsWith('"') ? value : JSON.parse(value));
    }
  });

  it('uses a custom body_field and omits the body when the argument is absent', async () => {
    const s = await server();
    const t = tpl(`${s.url}/p`, { http_method: 'PUT', body_field: 'payload' });
    await call(testContext(), t, { payload: [1, 2] });
    await call(testContext(), t, {});
    expect(s.requests[0].body).toBe('[1,2]');
    expect(s.requests[1].body).toBe('');
    expect(s.requests[1].headers['content-type']).toBeUndefined();
  });

  it('form-encodes an object body for application/x-www-form-urlencoded, nested values as JSON', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/f`, { http_method: 'POST', content_type: 'application/x-www-form-urlencoded' }),
      {
        body: { name: 'a b', nested: { k: 1 }, n: 3 },
      },
    );
    const r = s.requests[0];
    expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({ name: 'a b', nested: '{"k":1}', n: '3' });
  });

  it('sends multipart/form-data with one part per property and a generated boundary', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/m`, { http_method: 'POST', headers: { 'Content-Type': 'multipart/form-data' } }),
      {
        body: { file: 'hello', meta: { a: 1 } },
      },
    );
    const r = s.requests[0];
    const boundary = /boundary=(.+)$/.exec(r.headers['content-type'] ?? '')?.[1];
    expect(boundary).toBeTruthy();
    const form = await new Response(r.body, { headers: { 'content-type': r.headers['content-type']! } }).formData();
    expect(form.get('file')).toBe('hello');
    expect(form.get('meta')).toBe('{"a":1}');
  });

  it('sends a string body as-is for other content types', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/t`, { http_method: 'POST', content_type: 'text/plain' }), {
      body: 'plain "text"',
    });
    expect(s.requests[0].body).toBe('plain "text"');
    expect(s.requests[0].headers['content-type']).toBe('text/plain');
  });

  it('merges headers: static < header arguments < auth (case-insensitive)', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/h`, {
        headers: { 'X-Static': 'static', 'X-Over': 'static', 'x-api-key': 'static-key' },
        header_fields: ['X-Over'],
        auth: { auth_type: 'api_key', api_key: 'auth-key', var_name: 'X-Api-Key' },
      }),
      { 'X-Over': 'from-arg', q: 1 },
    );
    const h = s.requests[0].headers;
    expect(h['x-static']).toBe('static');
    expect(h['x-over']).toBe('from-arg');
    expect(h['x-api-key']).toBe('auth-key');
    expect(s.requests[0].url).toBe('/h?q=1');
  });

  it('merges cookie_fields arguments and an api_key cookie into one Cookie header', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/c`, {
        cookie_fields: ['session_pref'],
        auth: { auth_type: 'api_key', api_key: 'k1', var_name: 'apikey', location: 'cookie' },
      }),
      { session_pref: 'dark', other: 'x' },
    );
    const r = s.requests[0];
    expect(r.headers.cookie).toBe('session_pref=dark; apikey=k1');
    expect(r.url).toBe('/c?other=x');
  });

  it('appends an api_key query parameter after every other parameter', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/q?a=0`, { auth: { auth_type: 'api_key', api_key: 's3cr3t', var_name: 'key', location: 'query' } }),
      { z: 1 },
    );
    expect(s.requests[0].url).toBe('/q?a=0&z=1&key=s3cr3t');
  });

  it('sends basic auth as an Authorization header', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/b`, { auth: { auth_type: 'basic', username: 'ann', password: 'pä:ss' } }));
    expect(s.requests[0].headers.authorization).toBe('Basic ' + Buffer.from('ann:pä:ss').toString('base64'));
  });

  it('sends oauth2_user tokens with the configured header and prefix', async () => {
    const s = await server();
    await call(
      testContext(),
      tpl(`${s.url}/u`, {
        auth: { auth_type: 'oauth2_user', access_token: 'tok', var_name: 'X-Token', prefix: 'Token ' },
      }),
    );
    expect(s.requests[0].headers['x-token']).toBe('Token tok');
  });

  it('uses the template http_method', async () => {
    const s = await server();
    await call(testContext(), tpl(`${s.url}/d`, { http_method: 'DELETE' }), { id: 1 });
    expect(s.requests[0].method).toBe('DELETE');
    expect(s.requests[0].url).toBe('/d?id=1');
  });
});

describe('http tool calls: responses', () => {
  it('parses JSON responses', async () => {
    const s = await server((_req, res) => json(res, { hello: ['world'] }));
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual({ hello: ['world'] });
  });

  it('parses any media type containing json (e.g. application/problem+json)', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.api+json; charset=utf-8' });
      res.end('{"a":1}');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual({ a: 1 });
  });

  it('returns the text when a JSON response does not parse', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{broken');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toBe('{broken');
  });

  it('returns text responses as UTF-8 strings', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('grüße {"not":"parsed"}');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toBe('grüße {"not":"parsed"}');
  });

  it('returns "" for an empty body', async () => {
    const s = await server((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toBe('');
  });

  it('throws HttpStatusError with status, statusText, a bounded excerpt and the URL without query', async () => {
    const s = await server((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('missing ' + 'x'.repeat(5000));
    });
    const template = tpl(`${s.url}/nope`, {
      auth: { auth_type: 'api_key', api_key: 'QUERYSECRET', var_name: 'k', location: 'query' },
    });
    const error = (await call(testContext(), template, { a: 1 }).catch((e: unknown) => e)) as HttpStatusError;
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 404, statusText: 'Not Found', url: `${s.url}/nope`, code: 'HTTP_STATUS' });
    expect(error.bodyExcerpt.startsWith('missing x')).toBe(true);
    expect(error.bodyExcerpt.length).toBe(2048);
    expect(error.message).not.toContain('QUERYSECRET');
    expect(error.message).not.toContain('?');
  });

  it('rejects a response whose Content-Length exceeds max_response_bytes', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2000 });
      res.end('y'.repeat(2000));
    });
    const ctx = testContext();
    ctx.limits.max_response_bytes = 1000;
    await expect(call(ctx, tpl(s.url))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('stops reading a chunked response once it passes max_response_bytes', async () => {
    let written = 0;
    let closed = false;
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => (closed = true));
      const pump = () => {
        while (!closed && written < 50_000_000) {
          written += 65536;
          if (!res.write(Buffer.alloc(65536, 97))) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const ctx = testContext();
    ctx.limits.max_response_bytes = 100_000;
    await expect(call(ctx, tpl(s.url))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
    expect(written).toBeLessThan(50_000_000);
  });
});
