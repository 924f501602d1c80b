/**
 * The shared push → pull queue under a slow consumer (docs/design/transports.md#async-queue), through the public
 * client against real servers: where the producer can be paused (an exclusive WebSocket, a gRPC call) a stream far
 * larger than `limits.max_response_bytes` passes without error; where it cannot (a WebSocket shared by request id)
 * the unread data is bounded and the call fails with UtcpLimitError instead of filling memory. A GraphQL
 * subscription's socket is paused the same way.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { UtcpClient, UtcpLimitError } from '../../src/index.js';
import { FIXTURES, startGrpcServer } from '../fixtures/grpc/grpc-server.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const FRAMES = 4000;
const FRAME_TEXT_BYTES = 1000;
const BOUND = 1024 * 1024; // limits.max_response_bytes: a quarter of what the server sends

async function clientFor(template: Record<string, unknown>, rootDir?: string, bound = BOUND): Promise<UtcpClient> {
  const client = await UtcpClient.create({ limits: { max_response_bytes: bound } }, rootDir ? { rootDir } : {});
  cleanups.push(() => client.close());
  const tools = [
    { name: 't', description: '', inputs: { type: 'object', properties: {} }, tool_call_template: template },
  ];
  const result = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: [template.call_template_type as string],
  });
  expect(result.errors).toEqual([]);
  return client;
}

/** Reads the stream one item per event-loop turn (much slower than loopback delivers). */
async function readSlowly(stream: AsyncIterable<unknown>): Promise<{ count: number; error: unknown }> {
  let count = 0;
  try {
    for await (const _ of stream) {
      count++;
      await new Promise((r) => setImmediate(r));
    }
    return { count, error: undefined };
  } catch (error) {
    return { count, error };
  }
}

/** A WebSocket server answering each message with FRAMES frames of ~1 KB (echoing request_id), then stream_end. */
async function floodingWsServer(): Promise<number> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    ws.on('message', (data) => {
      const requestId = (JSON.parse(String(data)) as { request_id?: string }).request_id;
      const pad = 'x'.repeat(FRAME_TEXT_BYTES);
      for (let i = 0; i < FRAMES; i++) ws.send(JSON.stringify({ request_id: requestId, i, pad }));
      ws.send(JSON.stringify({ request_id: requestId, type: 'stream_end' }));
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return (wss.address() as { port: number }).port;
}

/** A graphql-transport-ws server answering a subscription with FRAMES `next` messages of ~1 KB, then `complete`. */
async function floodingGraphqlServer(): Promise<string> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'graphql-transport-ws' });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { type: string; id?: string };
      if (msg.type === 'connection_init') ws.send(JSON.stringify({ type: 'connection_ack' }));
      if (msg.type !== 'subscribe') return;
      const pad = 'x'.repeat(FRAME_TEXT_BYTES);
      for (let i = 0; i < FRAMES; i++)
        ws.send(JSON.stringify({ id: msg.id, type: 'next', payload: { data: { tick: { i, pad } } } }));
      ws.send(JSON.stringify({ id: msg.id, type: 'complete' }));
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return `ws://127.0.0.1:${(wss.address() as { port: number }).port}/graphql`;
}

describe('slow consumers', () => {
  it('an exclusive WebSocket stream is paused, not failed: 4 MB pass a 1 MB bound', async () => {
    const port = await floodingWsServer();
    const client = await clientFor({ call_template_type: 'websocket', url: `ws://127.0.0.1:${port}/`, timeout: 30 });
    expect(await readSlowly(client.callToolStreaming('m.t', {}))).toEqual({ count: FRAMES, error: undefined });
  });

  it('a WebSocket shared by request id cannot be paused: the unread data is bounded (UtcpLimitError)', async () => {
    const port = await floodingWsServer();
    const client = await clientFor({
      call_template_type: 'websocket',
      url: `ws://127.0.0.1:${port}/`,
      message: { request_id: 'UTCP_ARG_request_id_UTCP_ARG' },
      timeout: 30,
    });
    const { count, error } = await readSlowly(client.callToolStreaming('m.t', {}));
    expect(error).toBeInstanceOf(UtcpLimitError);
    expect(error).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'max_response_bytes' });
    expect((error as Error).message).toContain('WebSocket call m.t');
    expect(count).toBeLessThan(FRAMES);
    // The pooled socket survives the failed call; the next call is bounded the same way.
    const again = await readSlowly(client.callToolStreaming('m.t', {}));
    expect(again.error).toBeInstanceOf(UtcpLimitError);
  });

  it('a GraphQL subscription socket is paused, not failed: 4 MB pass a 1 MB bound', async () => {
    const url = await floodingGraphqlServer();
    const client = await clientFor({
      call_template_type: 'graphql',
      url: 'http://127.0.0.1:1/graphql',
      subscription_url: url,
      operation_type: 'subscription',
      query: 'subscription { tick { i pad } }',
    });
    expect(await readSlowly(client.callToolStreaming('m.t', {}))).toEqual({ count: FRAMES, error: undefined });
  });

  it('a gRPC server stream is paused, not failed: 20,000 messages pass a bound of 4,096 items', async () => {
    const server = await startGrpcServer({ reflection: 'none' });
    cleanups.push(() => server.close());
    const client = await clientFor(
      {
        call_template_type: 'grpc',
        host: '127.0.0.1',
        port: server.port,
        service_name: 'demo.v1.Calculator',
        method_name: 'Count',
        proto_file: 'demo/demo.proto',
        timeout: 60_000,
      },
      FIXTURES,
      256 * 1024,
    );
    // Each message counts at least 64 bytes: 256 KB hold 4,096 waiting messages.
    // Unpaused, about half the messages would wait unread at the end: far above the bound.
    expect(await readSlowly(client.callToolStreaming('m.t', { n: 20_000 }))).toEqual({
      count: 20_000,
      error: undefined,
    });
  });
});
