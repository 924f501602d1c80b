/** Shared setup for the grpc transport tests: a real grpc-js server, a transport, call options, a counting TCP proxy. */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import type { CallOptions } from '../../src/core/transport.js';
import type { Tool } from '../../src/core/types.js';
import type { GrpcCallTemplate } from '../../src/index.js';
import { createGrpcTransport } from '../../src/transports/grpc/index.js';
import { startGrpcServer, type GrpcServerOptions, type GrpcTestServer } from '../fixtures/grpc/grpc-server.js';
import { createTestContext } from '../helpers/context.js';

export const MANUAL = 'rpc';

export async function grpcServer(options: GrpcServerOptions = {}): Promise<GrpcTestServer> {
  const server = await startGrpcServer(options);
  onTestFinished(() => server.close());
  return server;
}

export function grpcTransport(overrides: Parameters<typeof createTestContext>[0] = {}) {
  const ctx = createTestContext(overrides);
  const transport = createGrpcTransport(ctx);
  onTestFinished(async () => {
    await transport.close();
    await ctx.disposeShared();
  });
  return { ctx, transport };
}

export function callOptions(
  raw: GrpcCallTemplate,
  signal: AbortSignal = new AbortController().signal,
  manualName = MANUAL,
): CallOptions {
  return { signal, manualName, rawTemplate: raw };
}

export function template(port: number, extra: Partial<GrpcCallTemplate> = {}): GrpcCallTemplate {
  return { name: MANUAL, call_template_type: 'grpc', host: '127.0.0.1', port, ...extra };
}

/** A tool as the client stores it (`rpc.<name>`), carrying `template`. */
export function toolFor(name: string, raw: GrpcCallTemplate, manualName = MANUAL): Tool {
  return { name: `${manualName}.${name}`, description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: raw };
}

export async function discover(
  transport: ReturnType<typeof grpcTransport>['transport'],
  raw: GrpcCallTemplate,
  substituted: GrpcCallTemplate = raw,
) {
  const result = await transport.registerManual(substituted, callOptions(raw));
  const tools = (result.manual as { tools: Tool[] }).tools;
  const byName = new Map(tools.map((t) => [t.name, { ...t, name: `${MANUAL}.${t.name}` } as Tool]));
  return {
    result,
    tools,
    tool(name: string): Tool {
      const t = byName.get(name);
      if (!t) throw new Error(`no tool ${name}`);
      return t;
    },
  };
}

export async function collect(items: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A TCP proxy to `targetPort` that counts connections and reports when they close. */
export async function countingProxy(targetPort: number) {
  const open = new Set<Socket>();
  let accepted = 0;
  const closeWaiters: Array<() => void> = [];
  const server = createServer((client) => {
    // Counted once it carries bytes: the transport's first dial of a new target only opens and closes a connection
    // (docs/design/threat-model.md#close-during-connect), and HTTP/2 channels are what these tests count.
    client.once('data', () => {
      accepted++;
      open.add(client);
    });
    const upstream = connect(targetPort, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const done = () => {
      client.destroy();
      upstream.destroy();
      if (open.delete(client) && open.size === 0) for (const w of closeWaiters.splice(0)) w();
    };
    client.on('close', done).on('error', done);
    upstream.on('close', done).on('error', done);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    open: () => open.size,
    /** Resolves once every proxied connection has closed. */
    allClosed: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => closeWaiters.push(resolve))),
  };
}

/** A raw TCP server for fault cases (garbage bytes, immediate close). */
export async function rawTcpServer(onConnection: (socket: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}
