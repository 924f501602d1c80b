import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpStatusError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/types.js';
import type { StreamableHttpCallTemplate } from '../../src/index.js';
import { createStreamableHttpTransport } from '../../src/transports/streamable-http/index.js';
import { callOptions, makeTool, testContext, type TestContext } from '../fixtures/http/harness.js';
import { deferred, json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

const tpl = (url: string, more: Partial<StreamableHttpCallTemplate> = {}): StreamableHttpCallTemplate => ({
  call_template_type: 'streamable_http',
  url,
  ...more,
});

const guard = () => AbortSignal.timeout(5000);

function stream(
  ctx: TestContext,
  template: StreamableHttpCallTemplate,
  args: JsonObject = {},
  signal: AbortSignal = guard(),
) {
  return createStreamableHttpTransport(ctx).callToolStream!(
    makeTool('s', template),
    args,
    template,
    callOptions(template, { signal }),
  );
}

function call(ctx: TestContext, template: StreamableHttpCallTemplate, args: JsonObject = {}) {
  return createStreamableHttpTransport(ctx).callTool(
    makeTool('s', template),
    args,
    template,
    callOptions(template, { signal: guard() }),
  );
}

async function collect(iterable: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('streamable_http: NDJSON', () => {
  it('yields the first line before the server sends the last one', async () => {
    const sendRest = deferred();
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"n":1}\n');
      await sendRest.promise;
      res.end('{"n":2}\n');
    });
    const seen: unknown[] = [];
    for await (const item of stream(testContext(), tpl(s.url))) {
      seen.push(item);
      if (seen.length === 1) sendRest.resolve();
    }
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('skips blank lines, strips CR, keeps unparsable lines as strings and reads a last line without newline', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/ndjson; charset=utf-8' });
      res.write('{"a":');
      res.write('1}\r\n\n   \nnot json\n');
      res.end('[2]');
    });
    await expect(collect(stream(testContext(), tpl(s.url)))).resolves.toEqual([{ a: 1 }, 'not json', [2]]);
  });

  it('treats application/jsonl as NDJSON', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      res.end('1\n2\n');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual([1, 2]);
  });

  it('fails a line longer than max_stream_item_bytes', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('"ok"\n');
      res.write('x'.repeat(300)); // unterminated, growing
    });
    const ctx = testContext();
    ctx.limits.max_stream_item_bytes = 200;
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream(ctx, tpl(s.url))) seen.push(item);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['ok']);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });
});

describe('streamable_http: other media types', () => {
  it('yields one parsed item for application/json; callTool returns [value]', async () => {
    const s = await server((_req, res) => json(res, { whole: true }));
    await expect(collect(stream(testContext(), tpl(s.url)))).resolves.toEqual([{ whole: true }]);
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual([{ whole: true }]);
  });

  it('yields the text for an unparsable application/json body', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{nope');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual(['{nope']);
  });

  it('parses text/event-stream bodies as SSE events', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"e":1}\n\nevent: x\ndata: two\n\n');
    });
    await expect(call(testContext(), tpl(s.url))).resolves.toEqual([{ e: 1 }, 'two']);
  });

  it('yields byte chunks of exactly chunk_size for other types', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(5, 1));
      res.write(Buffer.alloc(7, 2));
      res.end(Buffer.alloc(3, 3));
    });
    const items = (await collect(stream(testContext(), tpl(s.url, { chunk_size: 4 })))) as Uint8Array[];
    expect(items.every((i) => i instanceof Uint8Array)).toBe(true);
    expect(items.map((i) => i.byteLength)).toEqual([4, 4, 4, 3]);
    expect(Buffer.concat(items)).toEqual(Buffer.concat([Buffer.alloc(5, 1), Buffer.alloc(7, 2), Buffer.alloc(3, 3)]));
  });

  it('uses 8192-byte chunks when chunk_size is 0 and 4096 by default', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-custom' });
      res.end(Buffer.alloc(10000, 7));
    });
    const zero = (await collect(stream(testContext(), tpl(s.url, { chunk_size: 0 })))) as Uint8Array[];
    const dflt = (await collect(stream(testContext(), tpl(s.url)))) as Uint8Array[];
    expect(zero.map((i) => i.byteLength)).toEqual([8192, 1808]);
    expect(dflt.map((i) => i.byteLength)).toEqual([4096, 4096, 1808]);
  });

  it('callTool concatenates byte items into one Uint8Array', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.from('hello bytes'));
    });
    const result = await call(testContext(), tpl(s.url, { chunk_size: 3 }));
    expect(result).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(result as Uint8Array).toString()).toBe('hello bytes');
  });

  it('callTool fails when the items exceed max_response_bytes', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(5000));
    });
    const ctx = testContext();
    ctx.limits.max_response_bytes = 1000;
    await expect(call(ctx, tpl(s.url))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });
});

describe('streamable_http: requests and errors', () => {
  it('sends the template method, body with content_type, headers and auth', async () => {
    const s = await server((_req, res) => json(res, 1));
    await call(
      testContext(),
      tpl(`${s.url}/run/{id}`, {
        http_method: 'POST',
        content_type: 'application/json',
        body_field: 'input',
        headers: { 'X-Static': 's' },
        header_fields: ['X-Trace'],
        auth: { auth_type: 'basic', username: 'u', password: 'p' },
      }),
      { id: 'a/b', input: { x: 1 }, 'X-Trace': 't1', q: 'v' },
    );
    const r = s.requests[0];
    expect(r).toMatchObject({ method: 'POST', url: '/run/a%2Fb?q=v' });
    expect(r.headers).toMatchObject({
      'content-type': 'application/json',
      'x-static': 's',
      'x-trace': 't1',
      authorization: 'Basic dTpw',
    });
    expect(JSON.parse(r.body)).toEqual({ x: 1 });
  });

  it('sends a string body raw with the default application/octet-stream content type', async () => {
    const s = await server((_req, res) => json(res, 1));
    await call(testContext(), tpl(s.url, { http_method: 'POST', body_field: 'data' }), { data: 'raw text' });
    expect(s.requests[0].headers['content-type']).toBe('application/octet-stream');
    expect(s.requests[0].body).toBe('raw text');
  });

  it('refuses redirects on calls', async () => {
    const s = await server((req, res) => {
      if (req.url === '/a') {
        res.writeHead(307, { location: '/b' });
        res.end();
      } else json(res, 'followed');
    });
    await expect(call(testContext(), tpl(`${s.url}/a`))).rejects.toMatchObject({
      code: 'HTTP_STATUS',
      message: expect.stringContaining('never follow redirects'),
    });
    expect(s.requests).toHaveLength(1);
  });

  it('throws HttpStatusError for status >= 400', async () => {
    const s = await server((_req, res) => json(res, { e: 1 }, 422));
    const error = await call(testContext(), tpl(s.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 422, statusText: 'Unprocessable Entity' });
  });

  it('applies the template timeout to the whole request, body included', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('1\n'); // then stalls
    });
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream(testContext(), tpl(s.url, { timeout: 150 }))) seen.push(item);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 150 });
  });

  it('times out when the server never answers', async () => {
    const s = await server(() => {});
    await expect(call(testContext(), tpl(s.url, { timeout: 100 }))).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('closes the request when the consumer breaks out of the loop', async () => {
    const closed = deferred();
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('1\n');
      res.on('close', () => closed.resolve());
    });
    for await (const item of stream(testContext(), tpl(s.url))) {
      expect(item).toBe(1);
      break;
    }
    await closed.promise;
  });
});

describe('streamable_http discovery', () => {
  it('uses the template method and requires a UTCP manual', async () => {
    const s = await server((req, res) =>
      req.url === '/manual'
        ? json(res, {
            tools: [
              { name: 'x', tool_call_template: { call_template_type: 'streamable_http', url: 'http://127.0.0.1:1' } },
            ],
          })
        : json(res, { openapi: '3.0.0', paths: {} }),
    );
    const ok = tpl(`${s.url}/manual`, { http_method: 'POST' });
    const result = await createStreamableHttpTransport(testContext()).registerManual(ok, callOptions(ok));
    expect(result.manual).toMatchObject({ tools: [{ name: 'x' }] });
    expect(s.requests[0].method).toBe('POST');
    const bad = tpl(`${s.url}/spec`);
    await expect(
      createStreamableHttpTransport(testContext()).registerManual(bad, callOptions(bad)),
    ).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });
});
