/**
 * Servers that drop the connection at awkward moments (mid-body, mid-stream, mid-call) and callers
 * that stop reading early: every case must end in a typed UtcpError (or a clean end), never in an
 * uncaught exception or unhandled rejection (vitest fails the run on those), and leave no socket open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { UtcpClient, UtcpError } from '../../src/index.js';
import { startServer, type TestServer } from '../fixtures/http/server.js';
import { startTcpServer, type TcpTestServer } from '../fixtures/sockets/tcp-server.js';
import { startWsServer, type WsTestServer } from '../fixtures/sockets/ws-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tool = (name: string, tool_call_template: Record<string, unknown>) => ({
  name,
  description: name,
  inputs: {},
  outputs: {},
  tags: [],
  tool_call_template,
});

async function clientWith(tools: ReturnType<typeof tool>[], protocols: string[]): Promise<UtcpClient> {
  const client = await UtcpClient.create();
  cleanups.push(() => client.close());
  const r = await client.registerManual({
    name: 'r',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: protocols,
  });
  expect(r.errors).toEqual([]);
  return client;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (v) => {
      throw new Error(`resolved with ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

/** Headers and part of the body, then a reset. */
function resetMidBody(res: ServerResponse, contentType: string, first: string): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': '100000' });
  res.write(first, () => setImmediate(() => res.socket?.resetAndDestroy()));
}

describe('http-family servers resetting mid-body', () => {
  let http: TestServer;
  const setup = async () => {
    http = await startServer((req, res) => {
      if (req.url === '/json') return resetMidBody(res, 'application/json', '{"a": [1, 2,');
      if (req.url === '/sse') return resetMidBody(res, 'text/event-stream', 'data: {"n":1}\n\n');
      if (req.url === '/ndjson') return resetMidBody(res, 'application/x-ndjson', '{"n":1}\n');
      if (req.url === '/endless' || req.url === '/endless-sse') {
        const sse = req.url === '/endless-sse';
        res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/x-ndjson' });
        const timer = setInterval(() => res.write(sse ? 'data: {"n":1}\n\n' : '{"n":1}\n'), 5);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(404).end();
    });
    cleanups.push(() => http.close());
    return clientWith(
      [
        tool('json', { call_template_type: 'http', url: `${http.url}/json`, http_method: 'GET' }),
        tool('sse', { call_template_type: 'sse', url: `${http.url}/sse`, reconnect: false }),
        tool('ndjson', { call_template_type: 'streamable_http', url: `${http.url}/ndjson` }),
        tool('endless', { call_template_type: 'streamable_http', url: `${http.url}/endless` }),
        tool('endless_sse', { call_template_type: 'sse', url: `${http.url}/endless-sse` }),
        tool('gql', { call_template_type: 'graphql', url: `${http.url}/json`, query: 'query { a }' }),
      ],
      ['http', 'sse', 'streamable_http', 'graphql'],
    );
  };

  it.each(['json', 'gql', 'sse', 'ndjson'])('%s: callTool rejects with a typed error', async (name) => {
    const client = await setup();
    const error = await rejection(client.callTool(`r.${name}`, {}));
    expect(error).toBeInstanceOf(UtcpError);
    await http.allSocketsClosed();
  });

  it.each(['sse', 'ndjson'])('%s: a stream rejects with a typed error after the first item', async (name) => {
    const client = await setup();
    const items: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const item of client.callToolStreaming(`r.${name}`, {})) items.push(item);
      })(),
    );
    expect(items).toEqual([{ n: 1 }]);
    expect(error).toBeInstanceOf(UtcpError);
    await http.allSocketsClosed();
  });

  it.each(['endless', 'endless_sse'])(
    '%s: a caller that stops reading an endless stream releases the connection',
    async (name) => {
      const client = await setup();
      let n = 0;
      for await (const item of client.callToolStreaming(`r.${name}`, {})) {
        expect(item).toEqual({ n: 1 });
        if (++n === 3) break;
      }
      await http.allSocketsClosed();
    },
  );
});

describe('socket servers dropping a call', () => {
  it('tcp: a reset after a partial frame gives a typed error', async () => {
    const tcp: TcpTestServer = await startTcpServer((socket) =>
      socket.once('data', () => socket.write('{"partial":', () => socket.resetAndDestroy())),
    );
    cleanups.push(() => tcp.close());
    const client = await clientWith(
      [
        tool('t', {
          call_template_type: 'tcp',
          host: '127.0.0.1',
          port: tcp.port,
          framing_strategy: 'delimiter',
          message_delimiter: '\n',
        }),
      ],
      ['tcp'],
    );
    expect(await rejection(client.callTool('r.t', {}))).toBeInstanceOf(UtcpError);
  });

  it('websocket: a connection terminated mid-call gives a typed error, and the next call reconnects', async () => {
    const ws: WsTestServer = await startWsServer((peer, index) => {
      peer.ws.on('message', () => (index === 0 ? peer.ws.terminate() : peer.ws.send('"ok"')));
    });
    cleanups.push(() => ws.close());
    const client = await clientWith([tool('w', { call_template_type: 'websocket', url: ws.url })], ['websocket']);
    expect(await rejection(client.callTool('r.w', {}))).toBeInstanceOf(UtcpError);
    await expect(client.callTool('r.w', {})).resolves.toBe('ok');
  });

  it('graphql: a subscription whose server terminates after the first item gives a typed error', async () => {
    const ws: WsTestServer = await startWsServer(
      (peer) => {
        peer.ws.on('message', (data) => {
          const msg = JSON.parse(data.toString()) as { id?: string; type: string };
          if (msg.type === 'connection_init') peer.ws.send(JSON.stringify({ type: 'connection_ack' }));
          if (msg.type === 'subscribe')
            peer.ws.send(JSON.stringify({ id: msg.id, type: 'next', payload: { data: { n: 1 } } }), () =>
              peer.ws.terminate(),
            );
        });
      },
      { handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false) },
    );
    cleanups.push(() => ws.close());
    const url = ws.url.replace('ws:', 'http:');
    const client = await clientWith(
      [tool('g', { call_template_type: 'graphql', url, operation_type: 'subscription', query: 'subscription { n }' })],
      ['graphql'],
    );
    const items: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const item of client.callToolStreaming('r.g', {})) items.push(item);
      })(),
    );
    expect(items).toEqual([{ n: 1 }]);
    expect(error).toBeInstanceOf(UtcpError);
    await ws.peers[0].closed;
  });
});
