/**
 * GraphQL subscriptions over HTTP (docs/design/transports.md#graphql-http-subscriptions): GraphQL over SSE against a
 * stock graphql-yoga server with no configuration, multipart HTTP (Apollo's subscriptionSpec=1.0 and incremental
 * delivery) against a local server writing the real multipart format, and the WebSocket fallback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/core/errors.js';
import type { Tool } from '../../src/core/types.js';
import type { GraphqlCallTemplate } from '../../src/index.js';
import { GraphqlError } from '../../src/transports/graphql/index.js';
import { MANUAL, callOptions, discover, graphqlServer, graphqlTransport, template } from './graphql-helpers.js';

async function collect(items: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function subscriptionTool(raw: GraphqlCallTemplate, name: string): Tool {
  return { name: `${MANUAL}.${name}`, description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: raw };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A handler writing multipart parts in the given order, each flushed on its own, then (unless `cut`) the closing delimiter. */
function multipartRoute(
  parts: string[],
  options: { boundary?: string; cut?: boolean; seen?: Array<{ accept: string; body: string }> } = {},
) {
  const boundary = options.boundary ?? 'graphql';
  return async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    options.seen?.push({ accept: String(req.headers.accept), body });
    if (!String(req.headers.accept).includes('multipart/mixed')) {
      res.writeHead(406).end();
      return;
    }
    res.writeHead(200, { 'content-type': `multipart/mixed; boundary="${boundary}"; subscriptionSpec="1.0"` });
    res.write(`\r\n--${boundary}\r\n`);
    for (const [i, part] of parts.entries()) {
      res.write(
        `Content-Type: application/json; charset=utf-8\r\n\r\n${part}\r\n--${boundary}${i === parts.length - 1 && !options.cut ? '--' : ''}\r\n`,
      );
    }
    if (options.cut) res.socket?.destroy();
    else res.end();
  };
}

describe('graphql subscriptions over SSE (stock graphql-yoga, no configuration)', () => {
  it('streams every result over GraphQL over SSE and ends on "complete"', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url);
    const found = await discover(transport, raw);
    const tool = found.tool('countdown');
    const items = await collect(
      transport.callToolStream!(tool, { from: 3 }, tool.tool_call_template as GraphqlCallTemplate, callOptions(raw)),
    );
    expect(items).toEqual([3, 2, 1, 0]);
    const hit = server.httpHits.at(-1)!;
    expect(hit.headers.accept).toMatch(/^text\/event-stream/);
    expect(server.upgrades).toHaveLength(0);
    expect(server.requests.at(-1)).toMatchObject({
      query: 'subscription ($from: Int!) { countdown(from: $from) }',
      variables: { from: 3 },
    });
  });

  it('callTool returns the first result; explicit sse works too; errors in a result are GraphqlError', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, { subscription_transport: 'sse' });
    const found = await discover(transport, raw);
    const countdown = found.tool('countdown');
    const sse: GraphqlCallTemplate = {
      ...(countdown.tool_call_template as GraphqlCallTemplate),
      subscription_transport: 'sse',
    };
    await expect(transport.callTool(countdown, { from: 5 }, sse, callOptions(raw))).resolves.toBe(5);
    const broken = found.tool('brokenFeed');
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(
        broken,
        {},
        broken.tool_call_template as GraphqlCallTemplate,
        callOptions(raw),
      ))
        seen.push(item);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['first']);
    expect(error).toBeInstanceOf(GraphqlError);
    expect((error as Error).message).toContain('feed broke');
  });

  it('an SSE stream cut off before "complete" is an error, not a silent end', async () => {
    const server = await graphqlServer();
    server.route('/cut', async (req, res) => {
      await readBody(req);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: next\ndata: {"data":{"ticks":1}}\n\n', () => res.socket?.destroy());
    });
    const { transport } = graphqlTransport();
    const raw = template(`${server.origin}/cut`, { operation_type: 'subscription', query: 'subscription { ticks }' });
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(subscriptionTool(raw, 'ticks'), {}, raw, callOptions(raw)))
        seen.push(item);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toMatch(/without "complete"|failed/);
  });
});

describe('graphql subscriptions over multipart HTTP', () => {
  it('reads Apollo subscriptionSpec=1.0 parts (heartbeats skipped) and sends the multipart Accept header', async () => {
    const server = await graphqlServer();
    const seen: Array<{ accept: string; body: string }> = [];
    server.route(
      '/apollo',
      multipartRoute(['{}', '{"payload":{"data":{"ticks":1}}}', '{}', '{"payload":{"data":{"ticks":2}}}'], { seen }),
    );
    const { transport } = graphqlTransport();
    for (const mode of ['multipart', 'auto'] as const) {
      const raw = template(`${server.origin}/apollo`, {
        operation_type: 'subscription',
        query: 'subscription { ticks }',
        subscription_transport: mode,
      });
      await expect(
        collect(transport.callToolStream!(subscriptionTool(raw, 'ticks'), {}, raw, callOptions(raw))),
      ).resolves.toEqual([1, 2]);
    }
    expect(seen[0].accept).toContain('multipart/mixed;subscriptionSpec="1.0"');
    expect(JSON.parse(seen[0].body)).toMatchObject({ query: 'subscription { ticks }' });
  });

  it('reads incremental-delivery parts (hasNext) with the default boundary', async () => {
    const server = await graphqlServer();
    server.route(
      '/incremental',
      multipartRoute(['{"data":{"ticks":7},"hasNext":true}', '{"data":{"ticks":8},"hasNext":false}'], {
        boundary: '-',
      }),
    );
    const { transport } = graphqlTransport();
    const raw = template(`${server.origin}/incremental`, {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      subscription_transport: 'multipart',
    });
    await expect(
      collect(transport.callToolStream!(subscriptionTool(raw, 'ticks'), {}, raw, callOptions(raw))),
    ).resolves.toEqual([7, 8]);
  });

  it('a transport-level error part ({payload: null, errors}) is a GraphqlError; a cut-off stream is an error', async () => {
    const server = await graphqlServer();
    server.route(
      '/fatal',
      multipartRoute([
        '{"payload":{"data":{"ticks":1}}}',
        '{"payload":null,"errors":[{"message":"upstream subgraph went away"}]}',
      ]),
    );
    server.route('/cutoff', multipartRoute(['{"payload":{"data":{"ticks":1}}}'], { cut: true }));
    const { transport } = graphqlTransport();
    const fatal = template(`${server.origin}/fatal`, {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      subscription_transport: 'multipart',
    });
    await expect(
      collect(transport.callToolStream!(subscriptionTool(fatal, 'ticks'), {}, fatal, callOptions(fatal))),
    ).rejects.toThrow(/upstream subgraph went away/);
    const cut = template(`${server.origin}/cutoff`, {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      subscription_transport: 'multipart',
    });
    await expect(
      collect(transport.callToolStream!(subscriptionTool(cut, 'ticks'), {}, cut, callOptions(cut))),
    ).rejects.toBeInstanceOf(TransportError);
  });
});

describe('graphql subscription transport detection', () => {
  it('falls back to graphql-transport-ws when the HTTP endpoint does not stream, and remembers it', async () => {
    const server = await graphqlServer();
    let posts = 0;
    server.route('/ws-only', async (req, res) => {
      await readBody(req);
      posts++;
      res
        .writeHead(405, { 'content-type': 'application/json' })
        .end('{"errors":[{"message":"subscriptions are served over WebSocket"}]}');
    });
    const { transport } = graphqlTransport();
    const raw = template(`${server.origin}/ws-only`, {
      operation_type: 'subscription',
      query: 'subscription ($from: Int!) { countdown(from: $from) }',
      variable_types: { from: 'Int!' },
    });
    const tool = subscriptionTool(raw, 'countdown');
    await expect(collect(transport.callToolStream!(tool, { from: 1 }, raw, callOptions(raw)))).resolves.toEqual([1, 0]);
    await expect(collect(transport.callToolStream!(tool, { from: 2 }, raw, callOptions(raw)))).resolves.toEqual([
      2, 1, 0,
    ]);
    expect(posts).toBe(1);
    expect(server.upgrades.map((u) => u.path)).toEqual(['/ws-only', '/ws-only']);
  });

  it('an explicit ws:// subscription_url goes straight to WebSocket', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, { subscription_url: server.url.replace('http:', 'ws:') });
    const found = await discover(transport, raw);
    const tool = found.tool('countdown');
    await expect(
      collect(
        transport.callToolStream!(tool, { from: 1 }, tool.tool_call_template as GraphqlCallTemplate, callOptions(raw)),
      ),
    ).resolves.toEqual([1, 0]);
    expect(server.upgrades).toHaveLength(1);
  });

  it('rejects an unknown subscription_transport', async () => {
    const { transport } = graphqlTransport();
    const raw = template('http://127.0.0.1:1/graphql', {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      subscription_transport: 'carrier-pigeon' as never,
    });
    await expect(transport.callTool(subscriptionTool(raw, 'ticks'), {}, raw, callOptions(raw))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
  });
});
