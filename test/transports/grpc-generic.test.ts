import { describe, expect, it } from 'vitest';
import { UtcpArgumentsError, UtcpTimeoutError } from '../../src/core/errors.js';
import type { GrpcCallTemplate } from '../../src/index.js';
import { GrpcError } from '../../src/transports/grpc/index.js';
import { callOptions, collect, discover, grpcServer, grpcTransport, template } from './grpc-helpers.js';

const SERVICE = 'demo.v1.Calculator';

async function setup(reflection: 'v1' | 'v1alpha' = 'v1', extra: Partial<GrpcCallTemplate> = {}) {
  const server = await grpcServer({ reflection });
  const { transport } = grpcTransport();
  const raw = template(server.port, { service_name: SERVICE, ...extra });
  const found = await discover(transport, raw);
  const call = (name: string, args: Record<string, unknown>, override: Partial<GrpcCallTemplate> = {}) => {
    const tool = found.tool(name);
    return transport.callTool(
      tool,
      args,
      { ...(tool.tool_call_template as GrpcCallTemplate), ...override },
      callOptions(raw),
    );
  };
  const stream = (name: string, args: Record<string, unknown>) => {
    const tool = found.tool(name);
    return transport.callToolStream!(tool, args, tool.tool_call_template as GrpcCallTemplate, callOptions(raw));
  };
  return { server, transport, raw, found, call, stream };
}

describe('grpc generic discovery by reflection', () => {
  it('makes one tool per unary or server-streaming method and warns about the others', async () => {
    const { found } = await setup();
    expect(found.tools.map((t) => t.name)).toEqual(['Add', 'Echo', 'Count', 'Fail', 'Hang', 'Now']);
    expect(found.result.warnings).toEqual([
      `Skipped gRPC method ${SERVICE}/Upload: client streaming is not supported`,
      `Skipped gRPC method ${SERVICE}/Chat: bidirectional streaming is not supported`,
    ]);
    expect(found.tool('Add').description).toBe(`${SERVICE}/Add`);
    expect(found.tool('Add').tool_call_template).toMatchObject({ service_name: SERVICE, method_name: 'Add' });
  });

  it('asks for the service file, then each missing dependency by file name', async () => {
    const { server } = await setup();
    expect(server.reflectionRequests[0]).toBe(`file_containing_symbol:${SERVICE}`);
    expect(server.reflectionRequests).toContain('file_by_filename:common/types.proto');
    expect(server.reflectionRequests).toContain('file_by_filename:google/protobuf/timestamp.proto');
  });

  it('falls back to grpc.reflection.v1alpha when v1 is unimplemented', async () => {
    const { found, server } = await setup('v1alpha');
    expect(found.tools.map((t) => t.name)).toContain('Add');
    expect(server.reflectionRequests[0]).toBe(`file_containing_symbol:${SERVICE}`);
  });

  it('fails registration when the server offers no reflection, pointing at proto_file', async () => {
    const server = await grpcServer({ reflection: 'none' });
    const { transport } = grpcTransport();
    const raw = template(server.port, { service_name: SERVICE });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toThrow(/proto_file/);
  });

  it('fails registration for a service the server does not know', async () => {
    const server = await grpcServer();
    const { transport } = grpcTransport();
    const raw = template(server.port, { service_name: 'demo.v1.Nope' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('restricts discovery to method_name', async () => {
    const { found } = await setup('v1', { method_name: 'Count' });
    expect(found.tools.map((t) => t.name)).toEqual(['Count']);
  });

  it('returns a well-known type the RPC returns itself in its proto3 JSON form, as it does in a field (docs/design/transports.md#grpc-json)', async () => {
    const { found, call } = await setup();
    expect(found.tool('Now').outputs).toMatchObject({ type: 'string' });
    expect(await call('Now', {})).toBe('2023-11-14T22:13:20.500Z');
    // The same instant nested in a message has the same form.
    const echoed = (await call('Echo', { at: '2023-11-14T22:13:20.500Z' })) as { at: unknown };
    expect(echoed.at).toBe('2023-11-14T22:13:20.500Z');
  });

  it('maps request fields to JSON Schema', async () => {
    const { found } = await setup();
    const inputs = found.tool('Echo').inputs as any;
    const p = inputs.properties;
    expect(p.big).toMatchObject({ type: ['string', 'integer'], pattern: '^-?[0-9]+$' });
    expect(p.ubig).toMatchObject({ pattern: '^[0-9]+$' });
    expect(p.blob).toMatchObject({ type: 'string', contentEncoding: 'base64' });
    expect(p.color).toEqual({ type: 'string', enum: ['COLOR_UNSPECIFIED', 'RED', 'GREEN'] });
    expect(p.tags).toEqual({ type: 'array', items: { type: 'string' } });
    expect(p.counts).toEqual({ type: 'object', additionalProperties: { type: 'integer' } });
    expect(p.inner).toEqual({ $ref: '#/$defs/demo.v1.EchoMessage.Inner' });
    expect(inputs.$defs['demo.v1.EchoMessage.Inner'].properties.children).toEqual({
      type: 'array',
      items: { $ref: '#/$defs/demo.v1.EchoMessage.Inner' },
    });
    expect(p.point).toEqual({ $ref: '#/$defs/common.Point' });
    expect(p.at).toMatchObject({ type: 'string' });
    expect(p.took).toMatchObject({ type: 'string' });
    expect(p.extra).toEqual({ type: 'object' });
    expect(p.maybe).toEqual({ type: 'integer' });
    expect(p.any_value).toEqual({});
    expect(p.ratio).toEqual({ type: 'number' });
    expect(p.flag).toEqual({ type: 'boolean' });
  });

  it('describes server-streaming outputs as arrays and 64-bit outputs as strings', async () => {
    const { found } = await setup();
    expect(found.tool('Count').outputs).toEqual({
      type: 'array',
      items: { type: 'object', properties: { i: { type: 'integer' } } },
    });
    expect((found.tool('Add').outputs as any).properties.sum).toMatchObject({ type: 'string' });
  });
});

describe('grpc generic calls', () => {
  it('calls a unary method with the protobuf JSON mapping', async () => {
    const { call, server } = await setup();
    await expect(call('Add', { a: 2, b: 3 })).resolves.toEqual({ sum: '5' });
    expect(server.calls.at(-1)).toMatchObject({ method: 'Add', request: { a: 2, b: 3 } });
  });

  it('round-trips every kind of field', async () => {
    const { call, server } = await setup();
    const args = {
      big: '9007199254740993',
      ubig: 5,
      blob: Buffer.from('hello').toString('base64'),
      color: 'RED',
      tags: ['a', 'b'],
      counts: { x: 1, y: 2 },
      inner: { note: 'n', children: [{ note: 'c' }] },
      at: '2024-01-02T03:04:05.500Z',
      took: '1.5s',
      extra: { list: [1, 'x', null, { deep: true }] },
      maybe: 7,
      point: { x: 1.5, y: -2 },
      ratio: 0.25,
      flag: true,
      any_value: 'str',
      display_name: 'Dee',
    };
    const result = (await call('Echo', args)) as Record<string, unknown>;
    expect(result).toEqual({
      ...args,
      ubig: '5',
      inner: { note: 'n', children: [{ note: 'c', children: [] }] },
      took: '1.500s',
    });
    const received = server.calls.at(-1)!.request;
    expect(received).toMatchObject({
      big: '9007199254740993',
      ubig: '5',
      blob: 'aGVsbG8=',
      color: 'RED',
      at: { seconds: '1704164645', nanos: 500_000_000 },
    });
  });

  it('accepts lowerCamelCase field names', async () => {
    const { call, server } = await setup();
    await call('Echo', { displayName: 'Camel', anyValue: 3 });
    expect(server.calls.at(-1)!.request).toMatchObject({ display_name: 'Camel' });
  });

  it('rejects unknown fields and wrong types before calling', async () => {
    const { call, server } = await setup();
    const before = server.calls.length;
    const error = (await call('Echo', { nope: 1, big: 'twelve', color: 'PURPLE', tags: 'x', inner: { bad: 1 } }).catch(
      (e: unknown) => e,
    )) as UtcpArgumentsError;
    expect(error).toBeInstanceOf(UtcpArgumentsError);
    expect(error.issues.map((i) => i.path).sort()).toEqual(['big', 'color', 'inner.bad', 'nope', 'tags']);
    expect(server.calls.length).toBe(before);
  });

  it('returns the array of a server-streaming call', async () => {
    const { call } = await setup();
    await expect(call('Count', { n: 3 })).resolves.toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
  });

  it('streams server-streaming responses one by one', async () => {
    const { stream } = await setup();
    await expect(collect(stream('Count', { n: 2 }))).resolves.toEqual([{ i: 1 }, { i: 2 }]);
  });

  it('streams a unary call as one item', async () => {
    const { stream } = await setup();
    await expect(collect(stream('Add', { a: 1, b: 1 }))).resolves.toEqual([{ sum: '2' }]);
  });

  it('throws the status that ends a stream', async () => {
    const { call } = await setup();
    await expect(call('Count', { n: 2, fail_at_end: true })).rejects.toMatchObject({
      grpcStatus: 'ABORTED',
      details: 'count failed at the end',
    });
  });

  it('throws GrpcError with the status the server chose', async () => {
    const { call } = await setup();
    const error = await call('Fail', { code: 7, message: 'not for you' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrpcError);
    expect(error).toMatchObject({ grpcCode: 7, grpcStatus: 'PERMISSION_DENIED', details: 'not for you' });
  });

  it('rejects with TIMEOUT at the deadline', async () => {
    const { call } = await setup();
    await expect(call('Hang', {}, { timeout: 150 })).rejects.toBeInstanceOf(UtcpTimeoutError);
  });

  it('refuses to call a client-streaming method', async () => {
    const { transport, raw, found } = await setup();
    const tool = { ...found.tool('Add'), name: 'rpc.Upload' };
    const upload: GrpcCallTemplate = { ...raw, method_name: 'Upload' };
    await expect(transport.callTool(tool, {}, upload, callOptions(raw))).rejects.toMatchObject({
      code: 'NOT_SUPPORTED',
    });
  });

  it('loads descriptors once per manual, not per call', async () => {
    const { call, server } = await setup();
    const requests = server.reflectionRequests.length;
    await call('Add', { a: 1, b: 2 });
    await call('Add', { a: 3, b: 4 });
    expect(server.reflectionRequests.length).toBe(requests);
  });
});
