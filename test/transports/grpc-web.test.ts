/**
 * The grpc transport's HTTP/1.1 wire protocols (docs/design/transports.md#grpc-wire-protocols): gRPC-Web and Connect
 * against a real connect-node server, with schemas from echo.proto.
 */
import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { GrpcError, UtcpTimeoutError, type GrpcCallTemplate } from '../../src/index.js';
import { startConnectServer, WEB_FIXTURES } from '../fixtures/grpc/web/connect-server.js';
import { callOptions, collect, discover, grpcTransport, template, toolFor } from './grpc-helpers.js';

const SERVICE = 'web.v1.Echo';

async function connectServer() {
  const server = await startConnectServer();
  onTestFinished(() => server.close());
  return server;
}

/** A plain HTTP server on 127.0.0.1:0 answering every request with `answer`; closed after the test. */
async function rawServer(answer: (res: ServerResponse) => void): Promise<number> {
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    open.add(res);
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as { port: number }).port;
}

/** Answers with headers and then never sends the body: only a local deadline ends the call. */
function silentServer(): Promise<number> {
  return rawServer((res) => {
    res.writeHead(200, { 'content-type': 'application/grpc-web+proto' });
    res.flushHeaders();
  });
}

/** A gRPC-Web data frame. */
function webFrame(flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

type Wire = Pick<GrpcCallTemplate, 'wire_protocol' | 'connect_codec'>;

const WIRES: Array<[string, Wire]> = [
  ['gRPC-Web', { wire_protocol: 'grpc-web' }],
  ['Connect (JSON)', { wire_protocol: 'connect' }],
  ['Connect (binary)', { wire_protocol: 'connect', connect_codec: 'proto' }],
];

function webTemplate(port: number, wire: Wire, extra: Partial<GrpcCallTemplate> = {}): GrpcCallTemplate {
  return template(port, { service_name: SERVICE, proto_file: 'echo.proto', ...wire, ...extra });
}

describe.each(WIRES)('grpc transport over %s', (_label, wire) => {
  it('discovers the service from proto_file without calling the server', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const found = await discover(transport, webTemplate(server.port, wire));
    expect(found.tools.map((t) => t.name)).toEqual(['Say', 'Count', 'Fail', 'Slow']);
    expect(found.tool('Say').description).toBe(`${SERVICE}/Say\nSays the text back, with the request headers it saw.`);
    expect(server.calls).toEqual([]);
  });

  it('speaks the UTCP service (grpcpb.UTCPService): discovery, a call and a streamed call', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, wire);
    const found = await discover(transport, raw);
    expect(found.tools.map((t) => [t.name, t.description])).toEqual([['shout', 'Shouts the text.']]);
    const shout = found.tool('shout');
    expect(await transport.callTool(shout, { text: 'hi' }, raw, callOptions(raw))).toEqual({
      tool: 'shout',
      text: 'HI',
    });
    expect(await collect(transport.callToolStream!(shout, {}, raw, callOptions(raw)))).toEqual([
      { tool: 'shout', word: 'a' },
      { tool: 'shout', word: 'b' },
    ]);
    expect(server.calls.map((c) => c.method)).toEqual(['GetManual', 'CallTool', 'CallToolStream']);
  });

  it('calls a unary method with int64, a well-known type, metadata and auth headers', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire, {
      metadata: { 'x-tenant': 't1' },
      auth: { auth_type: 'api_key', api_key: 'k-123', var_name: 'X-Api-Key', location: 'header' },
    });
    const result = await transport.callTool(
      toolFor('Say', raw),
      { text: 'hello', big: '9007199254740993', at: '2020-05-06T07:08:09Z' },
      raw,
      callOptions(raw),
    );
    expect(result).toMatchObject({ text: 'hello', big: '9007199254740993', at: '2020-05-06T07:08:09Z' });
    // SayReply.server_only is not in echo.proto: skipped as binary protobuf skips an unknown field.
    expect(result).not.toHaveProperty('server_only');
    expect(result).not.toHaveProperty('serverOnly');
    const seen = (result as { seen: Record<string, string> }).seen;
    expect(seen).toMatchObject({ 'x-tenant': 't1', 'x-api-key': 'k-123' });
    if (wire.wire_protocol === 'grpc-web') {
      expect(seen['content-type']).toBe('application/grpc-web+proto');
      expect(seen['grpc-timeout']).toBe('30000m');
    } else {
      expect(seen['content-type']).toBe(wire.connect_codec === 'proto' ? 'application/proto' : 'application/json');
      expect(seen['connect-timeout-ms']).toBe('30000');
    }
  });

  it('streams a server-streaming method item by item, and collects it in callTool', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire);
    const streamed = await collect(transport.callToolStream!(toolFor('Count', raw), { n: 3 }, raw, callOptions(raw)));
    expect(streamed).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    expect(await transport.callTool(toolFor('Count', raw), { n: 2 }, raw, callOptions(raw))).toEqual([
      { i: 1 },
      { i: 2 },
    ]);
    expect(await transport.callTool(toolFor('Count', raw), { n: 0 }, raw, callOptions(raw))).toEqual([]);
    if (wire.wire_protocol === 'connect') {
      expect(server.calls[0]?.headers['content-type']).toBe(
        wire.connect_codec === 'proto' ? 'application/connect+proto' : 'application/connect+json',
      );
    }
  });

  it('maps an error status to GrpcError with the native gRPC code', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire);
    const error = await transport
      .callTool(toolFor('Fail', raw), { text: 'spoon' }, raw, callOptions(raw))
      .catch((e) => e);
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcCode: 5, grpcStatus: 'NOT_FOUND', details: 'no thing called spoon' });
  });

  it('yields the items before a stream error, then throws GrpcError', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire);
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(
        toolFor('Count', raw),
        { n: 5, fail_at: 3 },
        raw,
        callOptions(raw),
      ))
        items.push(item);
    })().catch((e) => e);
    expect(items).toEqual([{ i: 1 }, { i: 2 }]);
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcCode: 8, grpcStatus: 'RESOURCE_EXHAUSTED', details: 'the count broke' });
  });

  it('ends a slow call at the template deadline with a typed timeout', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire, { timeout: 300 });
    const started = Date.now();
    const error = await transport.callTool(toolFor('Slow', raw), { text: 'x' }, raw, callOptions(raw)).catch((e) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(Date.now() - started).toBeLessThan(3000);
    await server.abortedCall(0);
  });

  it('refuses a response message above the size limit before buffering it', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({
      rootDir: WEB_FIXTURES,
      limits: { ...DEFAULT_LIMITS, max_response_bytes: 64, max_stream_item_bytes: 64 },
    });
    const raw = webTemplate(server.port, wire);
    const error = await transport
      .callTool(toolFor('Say', raw), { text: 'x'.repeat(200) }, raw, callOptions(raw))
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });

  it('cancels a streaming call when the caller aborts, and the server sees the call end', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, wire);
    const controller = new AbortController();
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(
        toolFor('Count', raw),
        { n: 1000, delay_ms: 50 },
        raw,
        callOptions(raw, controller.signal),
      )) {
        items.push(item);
        if (items.length === 2) controller.abort();
      }
    })().catch((e) => e);
    expect(items).toEqual([{ i: 1 }, { i: 2 }]);
    expect(error).toMatchObject({ code: 'ABORTED' });
    await server.abortedCall(0);
  });
});

describe('grpc transport HTTP/1.1 wire protocols: local rules', () => {
  it.each(WIRES)('enforces the deadline locally when the server never answers (%s)', async (_label, wire) => {
    const port = await silentServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(port, wire, { timeout: 300 });
    const started = Date.now();
    const error = await transport.callTool(toolFor('Say', raw), { text: 'x' }, raw, callOptions(raw)).catch((e) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('fails with GrpcError INTERNAL, never a short result, when a gRPC-Web body ends without its trailers', async () => {
    const port = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/grpc-web+proto' });
      res.end(webFrame(0, Buffer.from([0x08, 0x01])));
    });
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(port, { wire_protocol: 'grpc-web' });
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(toolFor('Count', raw), { n: 3 }, raw, callOptions(raw)))
        items.push(item);
    })().catch((e) => e);
    expect(items).toEqual([{ i: 1 }]);
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcCode: 13, grpcStatus: 'INTERNAL' });
  });

  it('fails with GrpcError INTERNAL when a Connect stream ends without its end-of-stream message', async () => {
    const port = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/connect+json' });
      res.end(webFrame(0, Buffer.from('{"i":1}')));
    });
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(port, { wire_protocol: 'connect' });
    const error = await transport.callTool(toolFor('Count', raw), { n: 3 }, raw, callOptions(raw)).catch((e) => e);
    expect(error).toMatchObject({ grpcCode: 13, grpcStatus: 'INTERNAL' });
  });

  it('refuses a compressed Connect answer it never offered to read', async () => {
    const port = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    });
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(port, { wire_protocol: 'connect' });
    const error = await transport.callTool(toolFor('Say', raw), { text: 'x' }, raw, callOptions(raw)).catch((e) => e);
    expect(error).toMatchObject({ code: 'PROTOCOL_ERROR', message: expect.stringMatching(/gzip-compressed/) });
  });

  it('refuses a loopback target for a remote-sourced manual (the HTTP exchange rules apply)', async () => {
    const server = await connectServer();
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = webTemplate(server.port, { wire_protocol: 'connect' });
    const error = await transport
      .callTool(toolFor('Say', raw), { text: 'x' }, raw, { ...callOptions(raw), remoteSource: true })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY' });
    expect(server.calls).toEqual([]);
  });

  it.each(['content-length', 'transfer-encoding', 'host', 'content-type', 'connect-timeout-ms', 'x-grpc-web'])(
    'refuses metadata %s that frames the HTTP message or belongs to the protocol, before sending',
    async (name) => {
      const server = await connectServer();
      const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
      for (const wire_protocol of ['grpc-web', 'connect'] as const) {
        const raw = webTemplate(server.port, { wire_protocol }, { metadata: { [name]: '1' } });
        const error = await transport
          .callTool(toolFor('Say', raw), { text: 'x' }, raw, callOptions(raw))
          .catch((e) => e);
        expect(error).toMatchObject({ code: 'INVALID_MANUAL', message: expect.stringContaining(name) });
      }
      expect(server.calls).toEqual([]);
    },
  );

  it('needs proto_file: server reflection is read over native gRPC only', async () => {
    const { transport } = grpcTransport({ rootDir: WEB_FIXTURES });
    const raw = template(1, { service_name: SERVICE, wire_protocol: 'grpc-web' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
      message: expect.stringMatching(/needs proto_file/),
    });
  });
});
