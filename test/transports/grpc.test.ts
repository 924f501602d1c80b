import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ToolExecutionError, UrlPolicyError, UtcpAbortError, UtcpTimeoutError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { GrpcCallTemplate } from '../../src/index.js';
import { GrpcError, UTCP_SERVICE_PROTO } from '../../src/transports/grpc/index.js';
import { UTCP_PROTO_PATH } from '../fixtures/grpc/grpc-server.js';
import {
  MANUAL,
  callOptions,
  collect,
  countingProxy,
  discover,
  grpcServer,
  grpcTransport,
  rawTcpServer,
  template,
  toolFor,
} from './grpc-helpers.js';

describe('grpcpb.UTCPService discovery', () => {
  it('ships the same proto the fixture server is built from', () => {
    expect(UTCP_SERVICE_PROTO.trim()).toBe(readFileSync(UTCP_PROTO_PATH, 'utf8').trim());
  });

  it('turns GetManual into tools that carry the raw manual template', async () => {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, { metadata: { 'x-token': '${TOKEN}' } });
    const substituted = template(server.port, { metadata: { 'x-token': 'secret-123' } });
    const { result, tools } = await discover(transport, raw, substituted);
    expect(tools).toEqual([
      {
        name: 'echo',
        description: 'Echoes its arguments',
        inputs: { type: 'object' },
        outputs: {},
        tags: [],
        tool_call_template: raw,
      },
      {
        name: 'stream',
        description: 'Streams three items',
        inputs: { type: 'object' },
        outputs: {},
        tags: [],
        tool_call_template: raw,
      },
    ]);
    expect((result.manual as { utcp_version: string }).utcp_version).toBe('1.2.0');
    expect(server.calls).toEqual([
      { method: 'GetManual', request: {}, metadata: expect.objectContaining({ 'x-token': 'secret-123' }) },
    ]);
    expect(JSON.stringify(result)).not.toContain('secret-123');
  });

  it('fails registration when the server is not listening', async () => {
    const port = await rawTcpServer((socket) => socket.destroy());
    const { transport } = grpcTransport();
    const raw = template(port, { timeout: 2_000 });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toBeInstanceOf(GrpcError);
  });
});

describe('grpcpb.UTCPService calls', () => {
  async function setup(extra: Partial<GrpcCallTemplate> = {}, limits = DEFAULT_LIMITS) {
    const server = await grpcServer();
    const { transport } = grpcTransport({ limits: { ...limits } });
    const raw = template(server.port, extra);
    const call = (
      name: string,
      args: Record<string, unknown>,
      override: Partial<GrpcCallTemplate> = {},
      signal?: AbortSignal,
    ) => transport.callTool(toolFor(name, raw), args, { ...raw, ...override }, callOptions(raw, signal));
    const stream = (
      name: string,
      args: Record<string, unknown>,
      override: Partial<GrpcCallTemplate> = {},
      signal?: AbortSignal,
    ) => transport.callToolStream!(toolFor(name, raw), args, { ...raw, ...override }, callOptions(raw, signal));
    return { server, transport, raw, call, stream };
  }

  it('sends the bare tool name and the arguments as JSON', async () => {
    const { call, server } = await setup();
    await expect(call('echo', { x: 1, nested: { y: [true, null] } })).resolves.toEqual({
      x: 1,
      nested: { y: [true, null] },
    });
    expect(server.calls[0]).toMatchObject({
      method: 'CallTool',
      request: { tool: 'echo', args_json: '{"x":1,"nested":{"y":[true,null]}}' },
    });
  });

  it('sends the qualified name when tool_name_on_wire is qualified', async () => {
    const { call, server } = await setup({ tool_name_on_wire: 'qualified' });
    await call('echo', { a: 1 });
    expect(server.calls[0].request.tool).toBe(`${MANUAL}.echo`);
  });

  it('returns non-JSON result_json as text and empty result_json as null', async () => {
    const { call } = await setup();
    await expect(call('text', {})).resolves.toBe('plain text, not JSON');
    await expect(call('empty', {})).resolves.toBeNull();
  });

  it('throws GrpcError with the status code and details', async () => {
    const { call } = await setup();
    const error = (await call('missing', {}).catch((e: unknown) => e)) as GrpcError;
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect(error).toMatchObject({
      code: 'TOOL_ERROR',
      grpcCode: 5,
      grpcStatus: 'NOT_FOUND',
      details: 'unknown tool missing',
    });
    expect(error.message).toContain('NOT_FOUND');
  });

  it('streams each CallToolStream response until the server completes', async () => {
    const { stream, server } = await setup();
    await expect(collect(stream('stream', {}))).resolves.toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    expect(server.calls[0]).toMatchObject({ method: 'CallToolStream', request: { tool: 'stream', args_json: '{}' } });
  });

  it('throws the stream status after the items sent before it', async () => {
    const { stream } = await setup();
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of stream('broken', {})) items.push(item);
    })().catch((e: unknown) => e);
    expect(items).toEqual(['first']);
    expect(error).toMatchObject({ grpcStatus: 'DATA_LOSS', details: 'stream broke' });
  });

  it('cancels the server stream when the consumer breaks', async () => {
    const { stream, server } = await setup();
    const cancelled = server.nextCancellation();
    for await (const item of stream('endless', {})) {
      expect(item).toBe(1);
      break;
    }
    await expect(cancelled).resolves.toBe('CallToolStream');
  });

  it('rejects with TIMEOUT at the template deadline', async () => {
    const { call, server } = await setup();
    const cancelled = server.nextCancellation();
    const error = await call('hang', {}, { timeout: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    await expect(cancelled).resolves.toBe('CallTool');
  });

  it('cancels the call when the caller aborts', async () => {
    const { call, server } = await setup();
    const controller = new AbortController();
    const cancelled = server.nextCancellation();
    const pending = call('hang', {}, {}, controller.signal);
    await server.arrived('CallTool');
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(UtcpAbortError);
    await expect(cancelled).resolves.toBe('CallTool');
  });

  it('rejects an in-flight call when the transport closes', async () => {
    const { call, server, transport } = await setup();
    const pending = call('hang', {});
    await server.arrived('CallTool');
    await transport.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it('stops at max_response_bytes', async () => {
    const { call } = await setup({}, { ...DEFAULT_LIMITS, max_response_bytes: 200 });
    await expect(call('echo', { s: 'x'.repeat(50) })).resolves.toEqual({ s: 'x'.repeat(50) });
    await expect(call('echo', { s: 'x'.repeat(500) })).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });
});

describe('grpc auth and metadata', () => {
  async function metadataSeen(extra: Partial<GrpcCallTemplate>) {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, extra);
    await transport.callTool(toolFor('echo', raw), {}, raw, callOptions(raw));
    return server.calls[0].metadata;
  }

  it('sends an api_key under its lowercased var_name', async () => {
    const md = await metadataSeen({
      auth: { auth_type: 'api_key', api_key: 'k-1', var_name: 'X-Api-Key', location: 'header' },
    });
    expect(md['x-api-key']).toBe('k-1');
  });

  it('sends basic auth only as an authorization header', async () => {
    const md = await metadataSeen({ auth: { auth_type: 'basic', username: 'alice', password: 'pw' } });
    expect(md.authorization).toBe(`Basic ${Buffer.from('alice:pw').toString('base64')}`);
    expect(JSON.stringify(md)).not.toContain('alice');
    expect(Object.keys(md)).not.toContain('username');
    expect(Object.keys(md)).not.toContain('password');
  });

  it('sends an oauth2_user token as a bearer token', async () => {
    const md = await metadataSeen({ auth: { auth_type: 'oauth2_user', access_token: 'tok-u' } });
    expect(md.authorization).toBe('Bearer tok-u');
  });

  it('fetches an oauth2 token and sends it as a bearer token', async () => {
    let tokenRequests = 0;
    const tokenServer = createServer((req, res) => {
      tokenRequests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'tok-cc', token_type: 'bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => tokenServer.close(() => resolve())));
    const url = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
    const md = await metadataSeen({
      auth: { auth_type: 'oauth2', token_url: url, client_id: 'c', client_secret: 's' },
    });
    expect(md.authorization).toBe('Bearer tok-cc');
    expect(tokenRequests).toBe(1);
  });

  it('sends the static metadata map', async () => {
    const md = await metadataSeen({ metadata: { 'X-Tenant': 'acme', trace: 't-1' } });
    expect(md).toMatchObject({ 'x-tenant': 'acme', trace: 't-1' });
  });

  it('rejects an api_key outside headers before any call', async () => {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, {
      auth: { auth_type: 'api_key', api_key: 'k', var_name: 'key', location: 'query' },
    });
    await expect(transport.callTool(toolFor('echo', raw), {}, raw, callOptions(raw))).rejects.toThrow(
      /location "header"/,
    );
    expect(server.calls).toHaveLength(0);
  });

  it.each([
    [{ metadata: { 'x-a': 'v\r\nx-injected: 1' } }],
    [{ metadata: { 'x-a\nx-b': 'v' } }],
    [{ auth: { auth_type: 'api_key' as const, api_key: 'k\r\nx: y', var_name: 'x-key', location: 'header' as const } }],
  ])('rejects CR/LF in metadata before any call (%j)', async (extra) => {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, extra);
    const error = (await transport
      .callTool(toolFor('echo', raw), {}, raw, callOptions(raw))
      .catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'HEADER_INJECTION' });
    expect(error.message).toContain('CR/LF');
    expect(server.calls).toHaveLength(0);
  });
});

describe('grpc targets and channels', () => {
  it.each(['10.0.0.5', 'example.com', 'localhost.evil.com', '169.254.169.254', '0.0.0.0'])(
    'refuses plaintext to %s before dialing',
    async (host) => {
      const { transport } = grpcTransport();
      const raw = template(50051, { host });
      const error = (await transport.registerManual(raw, callOptions(raw)).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(UrlPolicyError);
      expect(error.message).toContain('literal loopback');
    },
  );

  it.each(['127.0.0.1', 'localhost', '::1', '[::1]'])('allows plaintext to loopback %s', async (host) => {
    const { transport } = grpcTransport();
    const raw = template(1, { host, timeout: 1_000 });
    // Port 1 is closed: the call reaches the network (no policy error) and fails there.
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toBeInstanceOf(GrpcError);
  });

  it.each([{ host: 'unix:/tmp/x' }, { host: 'a b' }, { port: 0 }, { port: 70000 }, { transport: 'grpc-web' as never }])(
    'rejects an invalid target %j',
    async (extra) => {
      const { transport } = grpcTransport();
      const raw = template(50051, extra);
      await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
    },
  );

  it('dials TLS when use_ssl is set (a plaintext server cannot answer)', async () => {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, { use_ssl: true, timeout: 2_000 });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ grpcStatus: 'UNAVAILABLE' });
    expect(server.calls).toHaveLength(0);
  });

  it('reuses one connection for discovery and calls of a manual', async () => {
    const server = await grpcServer();
    const proxy = await countingProxy(server.port);
    const { transport } = grpcTransport();
    const raw = template(proxy.port);
    await discover(transport, raw);
    for (let i = 0; i < 3; i++) await transport.callTool(toolFor('echo', raw), { i }, raw, callOptions(raw));
    expect(server.calls).toHaveLength(4);
    expect(proxy.accepted()).toBe(1);
  });

  it('shares a channel between manuals and closes it when the last one deregisters', async () => {
    const server = await grpcServer();
    const proxy = await countingProxy(server.port);
    const { transport } = grpcTransport();
    const a = template(proxy.port, { name: 'a' });
    const b = template(proxy.port, { name: 'b' });
    await transport.registerManual(a, callOptions(a, undefined, 'a'));
    await transport.registerManual(b, callOptions(b, undefined, 'b'));
    expect(proxy.accepted()).toBe(1);
    await transport.deregisterManual!(a, { manualName: 'a' });
    await transport.callTool(toolFor('echo', b, 'b'), {}, b, callOptions(b, undefined, 'b'));
    expect(proxy.open()).toBe(1);
    await transport.deregisterManual!(b, { manualName: 'b' });
    await proxy.allClosed();
    expect(proxy.open()).toBe(0);
  });

  it('closes its connections on close', async () => {
    const server = await grpcServer();
    const proxy = await countingProxy(server.port);
    const { transport } = grpcTransport();
    const raw = template(proxy.port);
    await discover(transport, raw);
    await transport.close();
    await proxy.allClosed();
    await transport.close(); // twice is safe
    await expect(transport.callTool(toolFor('echo', raw), {}, raw, callOptions(raw))).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('fails with a GrpcError when the peer answers garbage', async () => {
    const port = await rawTcpServer((socket) => socket.end(Buffer.from('this is not HTTP/2 at all\r\n\r\n'.repeat(4))));
    const { transport } = grpcTransport();
    const raw = template(port, { timeout: 2_000 });
    const error = await transport.callTool(toolFor('echo', raw), {}, raw, callOptions(raw)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrpcError);
    expect((error as GrpcError).grpcStatus).toMatch(/UNAVAILABLE|INTERNAL/);
  });

  it('fails with a GrpcError when the peer closes the connection at once', async () => {
    const port = await rawTcpServer((socket) => socket.destroy());
    const { transport } = grpcTransport();
    const raw = template(port, { timeout: 2_000 });
    await expect(transport.callTool(toolFor('echo', raw), {}, raw, callOptions(raw))).rejects.toMatchObject({
      grpcStatus: 'UNAVAILABLE',
    });
  });
});
