import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { GrpcError } from '../../src/transports/grpc/index.js';
import { FIXTURES } from '../fixtures/grpc/grpc-server.js';
import { grpcServer } from './grpc-helpers.js';

async function client(options: { rootDir?: string } = {}) {
  const c = await UtcpClient.create({ variables: { utcp_TOKEN: 'grpc-secret', calc_TOKEN: 'grpc-secret' } }, options);
  onTestFinished(() => c.close());
  return c;
}

describe('grpc through UtcpClient', () => {
  it('registers a grpcpb.UTCPService manual and calls and streams its tools', async () => {
    const server = await grpcServer();
    const c = await client();
    const result = await c.registerManual({
      name: 'utcp',
      call_template_type: 'grpc',
      host: '127.0.0.1',
      port: server.port,
      metadata: { 'x-token': '${TOKEN}' },
    });
    expect(result.success).toBe(true);
    expect(result.manual.tools.map((t) => t.name)).toEqual(['utcp.echo', 'utcp.stream']);
    await expect(c.callTool('utcp.echo', { hello: 'world' })).resolves.toEqual({ hello: 'world' });
    const items: unknown[] = [];
    for await (const item of c.callToolStreaming('utcp.stream', {})) items.push(item);
    expect(items).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    expect(server.calls.map((x) => x.metadata['x-token'])).toEqual(['grpc-secret', 'grpc-secret', 'grpc-secret']);
    expect(server.calls[1].request.tool).toBe('echo');
  });

  it('never stores the substituted metadata secret', async () => {
    const server = await grpcServer();
    const c = await client();
    const result = await c.registerManual({
      name: 'utcp',
      call_template_type: 'grpc',
      host: '127.0.0.1',
      port: server.port,
      metadata: { 'x-token': '${TOKEN}' },
    });
    expect(JSON.stringify(result)).not.toContain('grpc-secret');
    expect(JSON.stringify(await c.getTools())).not.toContain('grpc-secret');
  });

  it('registers a generic service by reflection and validates arguments against its schema', async () => {
    const server = await grpcServer();
    const c = await client();
    const result = await c.registerManual({
      name: 'calc',
      call_template_type: 'grpc',
      host: '127.0.0.1',
      port: server.port,
      service_name: 'demo.v1.Calculator',
    });
    expect(result.success).toBe(true);
    expect(result.warnings.join(' ')).toContain('Upload');
    await expect(c.callTool('calc.Add', { a: 20, b: 22 })).resolves.toEqual({ sum: '42' });
    await expect(c.callTool('calc.Add', { a: 'x' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await expect(c.callTool('calc.Fail', { code: 3, message: 'bad' })).rejects.toBeInstanceOf(GrpcError);
  });

  it('registers a generic service from a proto_file under the client root', async () => {
    const server = await grpcServer({ reflection: 'none' });
    const c = await client({ rootDir: FIXTURES });
    const result = await c.registerManual({
      name: 'calc',
      call_template_type: 'grpc',
      host: '127.0.0.1',
      port: server.port,
      service_name: 'demo.v1.Calculator',
      proto_file: 'demo/demo.proto',
    });
    expect(result.success).toBe(true);
    await expect(c.callTool('calc.Count', { n: 2 })).resolves.toEqual([{ i: 1 }, { i: 2 }]);
  });

  it('fails registration for plaintext to a remote host', async () => {
    const c = await client();
    const result = await c.registerManual({
      name: 'remote',
      call_template_type: 'grpc',
      host: 'grpc.example.com',
      port: 443,
    });
    expect(result.success).toBe(false);
    expect(result.errors.join(' ')).toContain('literal loopback');
  });

  it('applies the caller timeout', async () => {
    const server = await grpcServer();
    const c = await client();
    await c.registerManual({
      name: 'calc',
      call_template_type: 'grpc',
      host: '127.0.0.1',
      port: server.port,
      service_name: 'demo.v1.Calculator',
    });
    await expect(c.callTool('calc.Hang', {}, { timeoutMs: 150 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
});
