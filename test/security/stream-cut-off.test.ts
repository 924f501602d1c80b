/**
 * Threat model (docs/design/threat-model.md#cut-off-streams): a stream cut off mid-message is an error, never a
 * silently shorter result. For every streaming transport a real server on 127.0.0.1 cuts the connection in the
 * middle of a message (socket.destroy(), or a clean close inside a message where the framing allows it); both
 * `callTool` (aggregated) and `callToolStreaming` must fail with a typed error naming the transport, and a clean end
 * must still end the stream normally. The rule per protocol: docs/design/transports.md#cut-off-streams.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { GrpcError, TransportError, UtcpClient } from './packed.js';
import { FIXTURES } from '../fixtures/grpc/grpc-server.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A client with one tool `m.t` of the given template (an inline manual). */
async function clientFor(template: Record<string, unknown>, options: { rootDir?: string } = {}): Promise<UtcpClient> {
  const client = await UtcpClient.create({}, options);
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

/** The items a stream yielded and the error it ended with (undefined for a normal end). */
async function streamOf(client: UtcpClient, args: Record<string, unknown> = {}) {
  const items: unknown[] = [];
  let error: unknown;
  try {
    for await (const item of client.callToolStreaming('m.t', args)) items.push(item);
  } catch (e) {
    error = e;
  }
  return { items, error };
}

async function callError(client: UtcpClient, args: Record<string, unknown> = {}): Promise<unknown> {
  return client.callTool('m.t', args).then(
    (result) => ({ unexpectedResult: result }),
    (e: unknown) => e,
  );
}

/** Expects a cut-off error: a TransportError naming the transport and saying the stream was cut off. */
function expectCutOff(error: unknown, transport: string): void {
  expect(error).toBeInstanceOf(TransportError);
  expect((error as Error).message).toContain(transport);
  expect((error as Error).message).toMatch(/cut off|connection closed/);
}

async function listenHttp(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A raw TCP server: `onSocket` scripts each connection (for HTTP it writes the response by hand). */
async function listenTcp(onSocket: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as { port: number }).port;
}

/** Answers an HTTP request on a raw socket with a close-delimited body (no Content-Length, not chunked). */
function rawHttpAnswer(contentType: string, body: string, then: (socket: Socket) => void): (socket: Socket) => void {
  return (socket) => {
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      seen = '';
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\nConnection: close\r\n\r\n${body}`, () =>
        then(socket),
      );
    });
  };
}

/** Writes the chunks, then destroys the connection before the terminating chunk. */
function chunksThenDestroy(contentType: string, chunks: string[]) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': contentType });
    res.flushHeaders();
    let i = 0;
    const next = () => {
      if (i < chunks.length) res.write(chunks[i++], next);
      else res.socket?.destroy();
    };
    next();
  };
}

describe('websocket: close codes decide (until_close and streaming)', () => {
  async function wsTool(onMessage: (ws: WebSocket, raw: Socket) => void) {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(wss, 'listening');
    wss.on('connection', (ws, req) => {
      ws.on('error', () => {});
      ws.on('message', () => onMessage(ws, req.socket as Socket));
    });
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          wss.close(() => r());
        }),
    );
    const port = (wss.address() as { port: number }).port;
    return clientFor({
      call_template_type: 'websocket',
      url: `ws://127.0.0.1:${port}/ws`,
      response_mode: 'until_close',
      timeout: 10,
    });
  }

  /** One whole frame, then half a text frame (header says 20 bytes, 5 are sent), then the socket is destroyed. */
  const cutMidFrame = (ws: WebSocket, raw: Socket) => {
    ws.send('{"n":1}', () => raw.write(Buffer.from([0x81, 20, 0x7b, 0x22, 0x6e, 0x22, 0x3a]), () => raw.destroy()));
  };

  it('a connection destroyed mid-frame (1006) fails callTool instead of returning the frames so far', async () => {
    const client = await wsTool(cutMidFrame);
    const error = await callError(client);
    expectCutOff(error, 'WebSocket call m.t');
    expect((error as Error).message).toContain('1006');
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
  });

  it('the same cut fails callToolStreaming after the complete frames', async () => {
    const client = await wsTool(cutMidFrame);
    const { items, error } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(error, 'WebSocket call m.t');
  });

  it('a close with an error code (1011) is a cut too', async () => {
    const client = await wsTool((ws) => ws.send('{"n":1}', () => ws.close(1011, 'boom')));
    expectCutOff(await callError(client), 'WebSocket');
    const { items, error } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expect((error as Error).message).toContain('code 1011');
  });

  it('a normal close (1000, or a close frame without a code) ends both paths cleanly', async () => {
    const client = await wsTool((ws) => {
      ws.send('{"n":1}');
      ws.send('{"n":2}', () => ws.close(1000));
    });
    expect(await client.callTool('m.t', {})).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await streamOf(client)).toEqual({ items: [{ n: 1 }, { n: 2 }], error: undefined });

    const noCode = await wsTool((ws) => ws.send('{"n":1}', () => ws.close()));
    expect(await noCode.callTool('m.t', {})).toEqual([{ n: 1 }]);
    expect(await streamOf(noCode)).toEqual({ items: [{ n: 1 }], error: undefined });
  });
});

describe('sse: the body must not end inside an event', () => {
  const sseTool = (url: string, extra: Record<string, unknown> = {}) =>
    clientFor({ call_template_type: 'sse', url: `${url}/feed`, reconnect: false, ...extra });

  it('a connection destroyed mid-event (chunked body, no terminating chunk) fails both paths', async () => {
    const url = await listenHttp(chunksThenDestroy('text/event-stream', ['data: {"n":1}\n\n', 'data: {"n":']));
    const client = await sseTool(url);
    const error = await callError(client);
    expectCutOff(error, 'SSE call of tool m.t');
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(streamError, 'SSE call of tool m.t');
  });

  it('a close-delimited body that ends inside an event fails both paths (data line without its blank line)', async () => {
    const port = await listenTcp(
      rawHttpAnswer('text/event-stream', 'data: {"n":1}\n\ndata: {"n":2}\n', (s) => s.end()),
    );
    const client = await sseTool(`http://127.0.0.1:${port}`);
    const error = await callError(client);
    expectCutOff(error, 'SSE call of tool m.t');
    expect((error as Error).message).toContain('in the middle of an event');
    expect(error).toMatchObject({ code: 'PROTOCOL_ERROR' });
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(streamError, 'SSE');
  });

  it('with reconnect on, a server that keeps cutting the stream ends in an error, not a short result', async () => {
    // The server resumes after Last-Event-ID (nothing new to send) and cuts every connection mid-event.
    const cutting = chunksThenDestroy('text/event-stream', ['retry: 20\nid: 1\ndata: {"n":1}\n\n', 'data: {"n"']);
    const resumed = chunksThenDestroy('text/event-stream', ['data: {"n"']);
    const url = await listenHttp((req, res) => (req.headers['last-event-id'] === '1' ? resumed : cutting)(req, res));
    const client = await sseTool(url, { reconnect: true, retry_timeout: 300 });
    const error = await callError(client);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toContain('SSE call of tool m.t');
    expect((error as Error).message).toContain('reconnecting gave up');
    expect(((error as Error).cause as Error).message).toContain('cut off');
  });

  it('a body that ends after a complete event (a trailing comment allowed) ends both paths cleanly', async () => {
    const url = await listenHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"n":1}\r\n\r\nevent: x\ndata: two\n\n: bye');
    });
    const client = await sseTool(url);
    expect(await client.callTool('m.t', {})).toEqual([{ n: 1 }, 'two']);
    expect(await streamOf(client)).toEqual({ items: [{ n: 1 }, 'two'], error: undefined });
  });
});

describe('streamable_http: NDJSON and event streams must end on a boundary', () => {
  const tool = (url: string) => clientFor({ call_template_type: 'streamable_http', url: `${url}/s` });

  it('a connection reset before the terminating chunk fails both paths', async () => {
    const url = await listenHttp(chunksThenDestroy('application/x-ndjson', ['{"n":1}\n', '{"n":2']));
    const client = await tool(url);
    const error = await callError(client);
    expectCutOff(error, 'Streamable HTTP call of tool m.t');
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(streamError, 'Streamable HTTP');
  });

  it('a close-delimited NDJSON body ending in a partial line fails both paths', async () => {
    const port = await listenTcp(rawHttpAnswer('application/x-ndjson', '{"n":1}\n{"n":2,"s":"ab', (s) => s.end()));
    const client = await tool(`http://127.0.0.1:${port}`);
    const error = await callError(client);
    expectCutOff(error, 'Streamable HTTP call of tool m.t');
    expect((error as Error).message).toContain('in the middle of a line');
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(streamError, 'Streamable HTTP');
  });

  it('an event stream ending inside an event fails', async () => {
    const port = await listenTcp(rawHttpAnswer('text/event-stream', 'data: 1\n\ndata: 2', (s) => s.end()));
    const client = await tool(`http://127.0.0.1:${port}`);
    expectCutOff(await callError(client), 'Streamable HTTP');
  });

  it('a complete NDJSON body ends both paths cleanly (a last line without newline is fine when it is whole JSON)', async () => {
    const url = await listenHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"n":1}\n');
      res.end('{"n":2}');
    });
    const client = await tool(url);
    expect(await client.callTool('m.t', {})).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await streamOf(client)).toEqual({ items: [{ n: 1 }, { n: 2 }], error: undefined });
  });
});

describe('tcp: a partial frame at EOF is an error in every framing', () => {
  /** The server answers the request with `reply`, then destroys the socket (or ends it cleanly). */
  async function tcpTool(framing: Record<string, unknown>, reply: Buffer | string, how: 'destroy' | 'end') {
    const port = await listenTcp((socket) => {
      socket.once('data', () => socket.write(reply, () => (how === 'destroy' ? socket.destroy() : socket.end())));
    });
    return clientFor({ call_template_type: 'tcp', host: '127.0.0.1', port, timeout: 10_000, ...framing });
  }
  const prefixed = (body: string, claimed = Buffer.byteLength(body)) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(claimed);
    return Buffer.concat([head, Buffer.from(body)]);
  };

  it('delimiter framing: a message without its delimiter fails both paths', async () => {
    const client = await tcpTool({ framing_strategy: 'delimiter', message_delimiter: '\\n' }, '{"n":1', 'destroy');
    expectCutOff(await callError(client), 'TCP call m.t');
    const { items, error } = await streamOf(client);
    expect(items).toEqual([]);
    expectCutOff(error, 'TCP call m.t');
  });

  it('length_prefix framing: fewer bytes than the prefix says fails both paths', async () => {
    const client = await tcpTool({ framing_strategy: 'length_prefix' }, prefixed('{"n":1', 20), 'destroy');
    const error = await callError(client);
    expectCutOff(error, 'TCP call m.t');
    expect((error as Error).message).toContain('after 6 of 20 bytes');
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([]);
    expectCutOff(streamError, 'TCP');
  });

  it('ndjson framing: a partial last line fails both paths, after the whole lines when streaming', async () => {
    const client = await tcpTool({ framing_strategy: 'ndjson' }, '{"n":1}\n{"n":2,"s":"x', 'destroy');
    const error = await callError(client);
    expectCutOff(error, 'TCP call m.t');
    expect((error as Error).message).toContain('in the middle of a line');
    const { items, error: streamError } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }]);
    expectCutOff(streamError, 'TCP');
  });

  it('complete frames end both paths cleanly', async () => {
    const delimited = await tcpTool({ framing_strategy: 'delimiter', message_delimiter: '\\n' }, '{"n":1}\n', 'end');
    expect(await delimited.callTool('m.t', {})).toEqual({ n: 1 });
    expect(await streamOf(delimited)).toEqual({ items: [{ n: 1 }], error: undefined });
    const lengthPrefixed = await tcpTool({ framing_strategy: 'length_prefix' }, prefixed('{"n":1}'), 'end');
    expect(await lengthPrefixed.callTool('m.t', {})).toEqual({ n: 1 });
    const ndjson = await tcpTool({ framing_strategy: 'ndjson' }, '{"n":1}\n{"n":2}\n', 'end');
    expect(await ndjson.callTool('m.t', {})).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await streamOf(ndjson)).toEqual({ items: [{ n: 1 }, { n: 2 }], error: undefined });
  });
});

describe('grpc: a server stream must end with an OK status', () => {
  /** CountResponse { i } as one gRPC message (uncompressed, 4-byte length). */
  const message = (i: number) => {
    const body = Buffer.from([0x08, i]);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  };

  /** A raw HTTP/2 server answering `Count` with two messages, then `end` decides how the stream ends. */
  async function grpcTool(end: 'status-ok' | 'no-status' | 'destroy-mid-message') {
    const server = http2.createServer();
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: end === 'status-ok' });
      stream.write(message(1));
      stream.write(message(2), () => {
        if (end === 'status-ok') {
          stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
          stream.end();
        } else if (end === 'no-status') {
          stream.end();
        } else {
          stream.write(message(3).subarray(0, 4), () => {
            for (const s of sockets) s.destroy();
          });
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        }),
    );
    return clientFor(
      {
        call_template_type: 'grpc',
        host: '127.0.0.1',
        port: (server.address() as { port: number }).port,
        service_name: 'demo.v1.Calculator',
        method_name: 'Count',
        proto_file: 'demo/demo.proto',
      },
      { rootDir: FIXTURES },
    );
  }

  it('a connection destroyed mid-message fails both paths with the gRPC status of a lost connection', async () => {
    const client = await grpcTool('destroy-mid-message');
    const error = await callError(client, { n: 3 });
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcStatus: 'UNAVAILABLE' });
    expect((error as Error).message).toContain('gRPC tool m.t');
    const { items, error: streamError } = await streamOf(client, { n: 3 });
    expect(items).toEqual([{ i: 1 }, { i: 2 }]);
    expect(streamError).toMatchObject({ name: 'GrpcError', grpcStatus: 'UNAVAILABLE' });
  });

  it('a stream that ends without trailers (no grpc-status) fails both paths', async () => {
    const client = await grpcTool('no-status');
    const error = await callError(client, { n: 3 });
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcStatus: 'INTERNAL' });
    expect((error as Error).message).toMatch(/gRPC tool m\.t.*without gRPC status/);
    const { items, error: streamError } = await streamOf(client, { n: 3 });
    expect(items).toEqual([{ i: 1 }, { i: 2 }]);
    expect(streamError).toMatchObject({ name: 'GrpcError', grpcStatus: 'INTERNAL' });
  });

  it('a stream that ends with grpc-status 0 ends both paths cleanly', async () => {
    const client = await grpcTool('status-ok');
    expect(await client.callTool('m.t', { n: 2 })).toEqual([{ i: 1 }, { i: 2 }]);
    expect(await streamOf(client, { n: 2 })).toEqual({ items: [{ i: 1 }, { i: 2 }], error: undefined });
  });
});
