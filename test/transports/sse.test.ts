import type { ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpStatusError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/types.js';
import type { SseCallTemplate } from '../../src/index.js';
import { createSseTransport } from '../../src/transports/sse/index.js';
import { callOptions, makeTool, testContext, type TestContext } from '../fixtures/http/harness.js';
import { deferred, json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

const tpl = (url: string, more: Partial<SseCallTemplate> = {}): SseCallTemplate => ({
  call_template_type: 'sse',
  url,
  ...more,
});

/** A signal that fails a hung test quickly instead of waiting for the vitest timeout. */
const guard = () => AbortSignal.timeout(5000);

function stream(ctx: TestContext, template: SseCallTemplate, args: JsonObject = {}, signal: AbortSignal = guard()) {
  return createSseTransport(ctx).callToolStream!(
    makeTool('s', template),
    args,
    template,
    callOptions(template, { signal }),
  );
}

async function collect(iterable: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('sse calls: streaming', () => {
  it('yields the first event before the server sends the last one', async () => {
    const sendRest = deferred();
    const s = await server(async (_req, res) => {
      sseHead(res);
      res.write('data: {"n":1}\n\n');
      await sendRest.promise;
      res.end('data: {"n":2}\n\n');
    });
    const seen: unknown[] = [];
    for await (const item of stream(testContext(), tpl(`${s.url}/events`))) {
      seen.push(item);
      if (seen.length === 1) sendRest.resolve();
    }
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('follows WHATWG parsing: CRLF/CR line ends, comments, multi-line data, one leading space stripped', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.write(': a comment\r\n');
      res.write('data:  two spaces\r\n\r\n');
      res.write('data: line1\rdata: line2\r\r');
      res.write('data\n\n');
      res.end('data: {"json": true}\n\nevent: other\ndata: typed\n\n');
    });
    const items = await collect(stream(testContext(), tpl(s.url)));
    expect(items).toEqual([' two spaces', 'line1\nline2', { json: true }, 'typed']);
  });

  it('decodes multibyte UTF-8 split across chunks', async () => {
    const bytes = Buffer.from('data: grüße 🎉\n\n', 'utf8');
    const cut = bytes.indexOf(0x9f); // inside the emoji
    const s = await server(async (_req, res) => {
      sseHead(res);
      res.write(bytes.subarray(0, 9)); // splits the ü
      res.write(bytes.subarray(9, cut));
      res.end(bytes.subarray(cut));
    });
    await expect(collect(stream(testContext(), tpl(s.url)))).resolves.toEqual(['grüße 🎉']);
  });

  it('yields only events of event_type when it is set', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end('data: untyped\n\nevent: tick\ndata: 1\n\nevent: tock\ndata: 2\n\nevent: tick\ndata: 3\n\n');
    });
    await expect(collect(stream(testContext(), tpl(s.url, { event_type: 'tick' })))).resolves.toEqual([1, 3]);
  });

  it('treats untyped events as "message"', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end('data: a\n\nevent: x\ndata: b\n\n');
    });
    await expect(collect(stream(testContext(), tpl(s.url, { event_type: 'message' })))).resolves.toEqual(['a']);
  });

  it('sends GET with Accept: text/event-stream and arguments as query when there is no body', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end();
    });
    await collect(
      stream(testContext(), tpl(`${s.url}/e/{room}`, { headers: { Accept: 'application/json' } }), {
        room: 'a b',
        since: 5,
      }),
    );
    expect(s.requests[0]).toMatchObject({ method: 'GET', url: '/e/a%20b?since=5' });
    expect(s.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('sends POST with a JSON body when the body argument is present', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end('data: ok\n\n');
    });
    await collect(stream(testContext(), tpl(s.url, { body_field: 'prompt' }), { prompt: { text: 'hi' }, q: 1 }));
    const r = s.requests[0];
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/?q=1');
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({ text: 'hi' });
  });

  it('callTool returns all items as an array', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end('data: 1\n\ndata: two\n\n');
    });
    const t = tpl(s.url);
    await expect(createSseTransport(testContext()).callTool(makeTool('s', t), {}, t, callOptions(t))).resolves.toEqual([
      1,
      'two',
    ]);
  });
});

describe('sse calls: errors and limits', () => {
  it('refuses to follow a redirect', async () => {
    const s = await server((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/events' });
        res.end();
      } else {
        sseHead(res);
        res.end('data: x\n\n');
      }
    });
    await expect(collect(stream(testContext(), tpl(`${s.url}/moved`)))).rejects.toMatchObject({
      code: 'HTTP_STATUS',
      message: expect.stringContaining('redirect'),
    });
    expect(s.requests.map((r) => r.url)).toEqual(['/moved']);
  });

  it('throws HttpStatusError for status >= 400', async () => {
    const s = await server((_req, res) => json(res, { error: 'nope' }, 503));
    const error = await collect(stream(testContext(), tpl(s.url))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 503 });
  });

  it('fails an event larger than max_stream_item_bytes', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.end(`data: ok\n\ndata: ${'x'.repeat(500)}\n\n`);
    });
    const ctx = testContext();
    ctx.limits.max_stream_item_bytes = 100;
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const item of stream(ctx, tpl(s.url))) seen.push(item);
      })(),
    ).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
    expect(seen).toEqual(['ok']);
  });

  it('fails a partial event that grows past max_stream_item_bytes without waiting for its end', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.write(`data: ${'x'.repeat(400)}\ndata: ${'y'.repeat(400)}`); // never terminated
    });
    const ctx = testContext();
    ctx.limits.max_stream_item_bytes = 300;
    await expect(collect(stream(ctx, tpl(s.url)))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('callTool fails when the items exceed max_response_bytes', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      for (let i = 0; i < 10; i++) res.write(`data: ${'z'.repeat(50)}\n\n`);
      res.end();
    });
    const ctx = testContext();
    ctx.limits.max_response_bytes = 200;
    const t = tpl(s.url);
    await expect(createSseTransport(ctx).callTool(makeTool('s', t), {}, t, callOptions(t))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('times out with TIMEOUT when the server never answers', async () => {
    const s = await server(() => {});
    await expect(collect(stream(testContext(), tpl(s.url), {}, AbortSignal.timeout(100)))).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });

  it('stops with ABORTED when the caller aborts mid-stream', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.write('data: 1\n\n');
    });
    const controller = new AbortController();
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream(testContext(), tpl(s.url), {}, controller.signal)) {
        seen.push(item);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    expect(error).toMatchObject({ code: 'ABORTED' });
  });

  it('closes the request when the consumer breaks out of the loop', async () => {
    const closed = deferred();
    const s = await server((req, res) => {
      sseHead(res);
      res.write('data: 1\n\n');
      res.on('close', () => closed.resolve());
    });
    for await (const item of stream(testContext(), tpl(s.url))) {
      expect(item).toBe(1);
      break;
    }
    await closed.promise;
    expect(s.requests).toHaveLength(1);
  });
});

describe('sse calls: reconnection', () => {
  it('reconnects a GET stream after a network error with Last-Event-ID, after the server retry delay', async () => {
    const s = await server((req, res) => {
      sseHead(res);
      if (!req.headers['last-event-id']) {
        res.write('retry: 20\nid: 7\ndata: first\n\n');
        res.write('data: partial-never-dispatched');
        setImmediate(() => res.socket?.destroy());
      } else {
        res.end(`id: 8\ndata: after ${req.headers['last-event-id']}\n\n`);
      }
    });
    await expect(collect(stream(testContext(), tpl(s.url)))).resolves.toEqual(['first', 'after 7']);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].headers['last-event-id']).toBe('7');
  });

  it('does not reconnect when reconnect is false', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.write('retry: 5\ndata: one\n\n');
      setImmediate(() => res.socket?.destroy());
    });
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream(testContext(), tpl(s.url, { reconnect: false }))) seen.push(item);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['one']);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(s.requests).toHaveLength(1);
  });

  it('never re-sends a request body: POST streams fail instead of reconnecting', async () => {
    const s = await server((_req, res) => {
      sseHead(res);
      res.write('retry: 5\ndata: one\n\n');
      setImmediate(() => res.socket?.destroy());
    });
    await expect(
      collect(stream(testContext(), tpl(s.url, { body_field: 'body' }), { body: { a: 1 } })),
    ).rejects.toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(s.requests).toHaveLength(1);
  });

  it('gives up after retry_timeout when reconnects keep failing', async () => {
    const s = await server((req, res) => {
      if (s.requests.length === 1) {
        sseHead(res);
        res.write('retry: 10\ndata: one\n\n');
        setImmediate(() => res.socket?.destroy());
      } else {
        req.socket.destroy();
      }
    });
    const error = await collect(stream(testContext(), tpl(s.url, { retry_timeout: 80 }))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED', message: expect.stringContaining('gave up after 80 ms') });
    expect(s.requests.length).toBeGreaterThanOrEqual(2);
    expect(s.requests.length).toBeLessThanOrEqual(10);
  });
});

describe('sse discovery', () => {
  it('fetches a UTCP manual with GET, headers and auth', async () => {
    const manual = {
      utcp_version: '1.0.0',
      manual_version: '1',
      tools: [{ name: 't', tool_call_template: { call_template_type: 'sse', url: 'http://127.0.0.1:1/e' } }],
    };
    const s = await server((_req, res) => json(res, manual));
    const t = tpl(`${s.url}/utcp`, { headers: { 'X-A': '1' }, auth: { auth_type: 'api_key', api_key: 'k' } });
    const result = await createSseTransport(testContext()).registerManual(t, callOptions(t));
    expect(result.manual).toMatchObject({ tools: [{ name: 't' }] });
    expect(s.requests[0]).toMatchObject({ method: 'GET', url: '/utcp' });
    expect(s.requests[0].headers).toMatchObject({ 'x-a': '1', 'x-api-key': 'k' });
  });

  it('rejects an OpenAPI document', async () => {
    const s = await server((_req, res) => json(res, { openapi: '3.0.0', paths: {} }));
    const t = tpl(s.url);
    await expect(createSseTransport(testContext()).registerManual(t, callOptions(t))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
  });
});
