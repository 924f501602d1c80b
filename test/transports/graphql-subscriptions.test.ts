import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { TransportError, UtcpAbortError, UtcpTimeoutError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { Tool } from '../../src/core/types.js';
import type { GraphqlCallTemplate } from '../../src/index.js';
import { GraphqlError } from '../../src/transports/graphql/index.js';
import { MANUAL, callOptions, discover, graphqlServer, graphqlTransport, template } from './graphql-helpers.js';

async function setup(extra: Partial<GraphqlCallTemplate> = {}, limits = DEFAULT_LIMITS) {
  const server = await graphqlServer();
  const { transport } = graphqlTransport({ limits: { ...limits } });
  // These cases test the WebSocket protocols; the stock server would otherwise be reached over SSE (auto mode).
  const raw = template(server.url, { subscription_transport: 'websocket', ...extra });
  const found = await discover(transport, raw);
  const stream = (
    name: string,
    args: Record<string, unknown>,
    override: Partial<GraphqlCallTemplate> = {},
    signal?: AbortSignal,
  ) => {
    const tool = found.tool(name);
    return transport.callToolStream!(
      tool,
      args,
      { ...(tool.tool_call_template as GraphqlCallTemplate), ...override },
      callOptions(raw, signal),
    );
  };
  const call = (name: string, args: Record<string, unknown>, override: Partial<GraphqlCallTemplate> = {}) => {
    const tool = found.tool(name);
    return transport.callTool(
      tool,
      args,
      { ...(tool.tool_call_template as GraphqlCallTemplate), ...override },
      callOptions(raw),
    );
  };
  return { server, transport, raw, stream, call };
}

async function collect(items: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A bare WebSocket server speaking graphql-transport-ws badly, for fault cases. */
async function rawWsServer(onConnection: (socket: WebSocket) => void): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => 'graphql-transport-ws' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', onConnection);
  onTestFinished(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/graphql`;
}

function foreignTool(raw: GraphqlCallTemplate, name: string): Tool {
  return { name: `${MANUAL}.${name}`, description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: raw };
}

describe('graphql subscriptions over graphql-transport-ws', () => {
  it('yields each payload as it arrives, unwrapped to the field value', async () => {
    const { stream } = await setup();
    await expect(collect(stream('countdown', { from: 3 }))).resolves.toEqual([3, 2, 1, 0]);
  });

  it('offers both subprotocols and sends the document with its variables', async () => {
    const { stream, server } = await setup();
    await collect(stream('countdown', { from: 1 }));
    expect(server.upgrades[0]).toMatchObject({ path: '/graphql', protocols: ['graphql-transport-ws', 'graphql-ws'] });
    expect(server.subscriptions).toEqual([
      {
        protocol: 'graphql-transport-ws',
        query: 'subscription ($from: Int!) { countdown(from: $from) }',
        variables: { from: 1 },
      },
    ]);
  });

  it('delivers items pushed later by the server', async () => {
    const { stream, server } = await setup();
    const it = stream('ticks', {})[Symbol.asyncIterator]();
    const first = it.next();
    await server.ticksReady();
    server.tick(7);
    await expect(first).resolves.toEqual({ value: 7, done: false });
    const second = it.next();
    server.tick(8);
    await expect(second).resolves.toEqual({ value: 8, done: false });
    await it.return?.();
  });

  it('completes the subscription on the server when the consumer breaks', async () => {
    const { stream, server } = await setup();
    const stopped = server.nextClientStop();
    const consumed = (async () => {
      for await (const item of stream('ticks', {})) return item;
    })();
    await server.ticksReady();
    server.tick(1);
    await expect(consumed).resolves.toBe(1);
    await expect(stopped).resolves.toBe('1');
  });

  it('callTool returns the first item and stops the subscription', async () => {
    const { call, server } = await setup();
    const stopped = server.nextClientStop();
    await expect(call('countdown', { from: 5 })).resolves.toBe(5);
    await expect(stopped).resolves.toBe('1');
  });

  it('rejects with ABORTED and stops the subscription when the caller aborts', async () => {
    const { stream, server } = await setup();
    const controller = new AbortController();
    const stopped = server.nextClientStop();
    const it = stream('ticks', {}, {}, controller.signal)[Symbol.asyncIterator]();
    const first = it.next();
    await server.ticksReady();
    server.tick(1);
    await first;
    const pending = it.next();
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(UtcpAbortError);
    await expect(stopped).resolves.toBe('1');
  });

  it('throws GraphqlError when the subscription reports an error', async () => {
    const { stream } = await setup();
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream('brokenFeed', {})) items.push(item);
    })().catch((e: unknown) => e);
    expect(items).toEqual(['first']);
    expect(error).toBeInstanceOf(GraphqlError);
    expect((error as Error).message).toContain('feed broke');
  });

  it('throws GraphqlError when the server rejects the subscription document', async () => {
    const { stream } = await setup();
    await expect(collect(stream('ticks', {}, { query: 'subscription { nope }' }))).rejects.toBeInstanceOf(GraphqlError);
  });

  it('sends auth headers on the WebSocket handshake', async () => {
    const { stream, server } = await setup({
      auth: { auth_type: 'api_key', api_key: 'ws-key', var_name: 'X-Api-Key', location: 'header' },
      headers: { 'X-Static': 's' },
    });
    await collect(stream('countdown', { from: 0 }));
    expect(server.upgrades[0].headers['x-api-key']).toBe('ws-key');
    expect(server.upgrades[0].headers['x-static']).toBe('s');
  });

  it('fails when the server refuses the upgrade', async () => {
    const { stream, server } = await setup();
    const error = await collect(
      stream('ticks', {}, { subscription_url: `ws://127.0.0.1:${server.port}/nowhere` }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toMatch(/404|refused|failed/);
  });

  it('times out when the server never acknowledges the connection', async () => {
    const url = await rawWsServer(() => {});
    const { transport } = graphqlTransport();
    const raw = template('http://127.0.0.1:1/graphql', {
      subscription_url: url,
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      timeout: 150,
    });
    const error = await collect(transport.callToolStream!(foreignTool(raw, 'ticks'), {}, raw, callOptions(raw))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UtcpTimeoutError);
  });

  it('keeps a subscription open past the template timeout once it is running', async () => {
    const { stream, server } = await setup();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const it = stream('ticks', {}, { timeout: 100 })[Symbol.asyncIterator]();
    const first = it.next();
    await server.ticksReady();
    server.tick(1);
    await first;
    const late = it.next();
    vi.advanceTimersByTime(1_000);
    vi.useRealTimers();
    server.tick(2);
    await expect(late).resolves.toEqual({ value: 2, done: false });
    await it.return?.();
  });

  it('rejects a message that is not JSON', async () => {
    const url = await rawWsServer((socket) => socket.on('message', () => socket.send('not json')));
    const { transport } = graphqlTransport();
    const raw = template('http://127.0.0.1:1/graphql', {
      subscription_url: url,
      operation_type: 'subscription',
      query: 'subscription { ticks }',
    });
    await expect(
      collect(transport.callToolStream!(foreignTool(raw, 'ticks'), {}, raw, callOptions(raw))),
    ).rejects.toMatchObject({ code: 'PROTOCOL_ERROR' });
  });

  it('fails when the server closes the socket mid-stream', async () => {
    const url = await rawWsServer((socket) =>
      socket.on('message', (data) => {
        const msg = JSON.parse(String(data));
        if (msg.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
        if (msg.type === 'subscribe') {
          socket.send(JSON.stringify({ id: msg.id, type: 'next', payload: { data: { ticks: 1 } } }));
          socket.close(4500, 'server going away');
        }
      }),
    );
    const { transport } = graphqlTransport();
    const raw = template('http://127.0.0.1:1/graphql', {
      subscription_url: url,
      operation_type: 'subscription',
      query: 'subscription { ticks }',
    });
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(foreignTool(raw, 'ticks'), {}, raw, callOptions(raw)))
        items.push(item);
    })().catch((e: unknown) => e);
    expect(items).toEqual([1]);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toContain('4500');
  });

  it('answers ping with pong', async () => {
    let pong: unknown;
    const url = await rawWsServer((socket) =>
      socket.on('message', (data) => {
        const msg = JSON.parse(String(data));
        if (msg.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
        if (msg.type === 'subscribe') socket.send(JSON.stringify({ type: 'ping' }));
        if (msg.type === 'pong') {
          pong = msg;
          socket.send(JSON.stringify({ id: '1', type: 'next', payload: { data: { ticks: 1 } } }));
          socket.send(JSON.stringify({ id: '1', type: 'complete' }));
        }
      }),
    );
    const { transport } = graphqlTransport();
    const raw = template('http://127.0.0.1:1/graphql', {
      subscription_url: url,
      operation_type: 'subscription',
      query: 'subscription { ticks }',
    });
    await expect(
      collect(transport.callToolStream!(foreignTool(raw, 'ticks'), {}, raw, callOptions(raw))),
    ).resolves.toEqual([1]);
    expect(pong).toEqual({ type: 'pong' });
  });

  it('stops reading at max_stream_item_bytes', async () => {
    const { stream } = await setup({}, { ...DEFAULT_LIMITS, max_stream_item_bytes: 40 });
    await expect(collect(stream('countdown', { from: 1 }))).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('terminates running subscriptions when the transport closes', async () => {
    const { stream, server, transport } = await setup();
    const it = stream('ticks', {})[Symbol.asyncIterator]();
    const first = it.next();
    await server.ticksReady();
    server.tick(1);
    await first;
    const pending = it.next();
    await transport.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });
});

describe('graphql subscriptions over legacy graphql-ws', () => {
  it('yields each data payload and ends on complete', async () => {
    const { stream, server } = await setup();
    await expect(collect(stream('countdown', { from: 2 }, { subscription_url: server.legacyUrl }))).resolves.toEqual([
      2, 1, 0,
    ]);
    expect(server.subscriptions[0]).toMatchObject({ protocol: 'graphql-ws', variables: { from: 2 } });
  });

  it('sends stop when the consumer breaks', async () => {
    const { stream, server } = await setup();
    const stopped = server.nextClientStop();
    const consumed = (async () => {
      for await (const item of stream('ticks', {}, { subscription_url: server.legacyUrl })) return item;
    })();
    await server.ticksReady();
    server.tick(4);
    await expect(consumed).resolves.toBe(4);
    await expect(stopped).resolves.toBe('1');
  });
});
