/**
 * The grpc transport's HTTP/1.1 wire protocols against hostile peers, on the packed package
 * (docs/design/threat-model.md#grpc-web-connect): a remote manual's gRPC-Web or Connect tool naming a host that
 * resolves to loopback, a frame declaring gigabytes, a server that never finishes. Every listener is on 127.0.0.1.
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectionCounter, listen } from '../helpers/listeners.js';
import { UtcpClient, UtcpTimeoutError } from './packed.js';
import { registerRemoteManual } from './remote-manual.js';

/** Resolves every name to 127.0.0.1 (the DNS record or /etc/hosts alias of the attack). */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  else callback(null, '127.0.0.1', 4);
};

/** An HTTP server answering every request with `answer`; open responses are destroyed after the test. */
async function hostileHttp(answer: (res: ServerResponse) => void): Promise<number> {
  const open = new Set<ServerResponse>();
  const server = createHttpServer((req, res) => {
    req.resume();
    open.add(res);
    answer(res);
  });
  const port = await listen(server);
  onTestFinished(
    () =>
      new Promise<void>((r) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return port;
}

/** Serves `tools` as a UTCP manual over TCP; registered under a name, it is a REMOTE manual source. */
async function remoteManualClient(tools: unknown[]): Promise<UtcpClient> {
  return (await registerRemoteManual(tools, toLoopback, ['tcp', 'grpc'])).client;
}

/** The same tools from a local (inline) manual. */
async function localManualClient(tools: unknown[]): Promise<UtcpClient> {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const result = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ utcp_version: '1.0.0', manual_version: '1.0.0', tools }),
    allowed_communication_protocols: ['grpc'],
  });
  expect(result.errors).toEqual([]);
  return client;
}

const open = { type: 'object' } as const;
const WIRES = ['grpc-web', 'connect'] as const;

/** The host process still answers: a timer and a local server round-trip both run. */
async function stillResponsive(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1));
  const port = await hostileHttp((res) => res.end('ok'));
  const answer = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
  expect(answer).toBe('ok');
}

describe.each(WIRES)('grpc wire_protocol %s against hostile peers (packed)', (wire) => {
  it('refuses a remote manual tool whose host resolves to loopback, before connecting', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 'g',
      inputs: open,
      tool_call_template: {
        call_template_type: 'grpc',
        host: 'alias.example.test',
        port: target.port,
        use_ssl: true,
        wire_protocol: wire,
      },
    };
    const client = await remoteManualClient([tool]);
    const error = await client.callTool('m.g', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY' });
    expect(target.count()).toBe(0);
  });

  it('refuses a frame that declares 4 GiB before buffering it, and the host stays responsive', async () => {
    const head = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    const port = await hostileHttp((res) => {
      res.writeHead(200, {
        'content-type': wire === 'grpc-web' ? 'application/grpc-web+proto' : 'application/connect+proto',
      });
      res.write(head);
      res.write(Buffer.alloc(64 * 1024));
    });
    const tool = {
      name: 'g',
      inputs: open,
      tool_call_template: {
        call_template_type: 'grpc',
        host: '127.0.0.1',
        port,
        wire_protocol: wire,
        connect_codec: 'proto',
      },
    };
    const client = await localManualClient([tool]);
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of client.callToolStreaming('m.g', {}, { timeoutMs: 5000 })) items.push(item);
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
    expect(items).toEqual([]);
    await stillResponsive();
  });

  it('ends a call whose server never finishes at the template timeout, with a typed timeout', async () => {
    const port = await hostileHttp((res) => {
      res.writeHead(200, { 'content-type': wire === 'grpc-web' ? 'application/grpc-web+proto' : 'application/proto' });
      res.flushHeaders();
    });
    const tool = {
      name: 'g',
      inputs: open,
      tool_call_template: { call_template_type: 'grpc', host: '127.0.0.1', port, wire_protocol: wire, timeout: 300 },
    };
    const client = await localManualClient([tool]);
    const started = Date.now();
    const error = await client.callTool('m.g', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(Date.now() - started).toBeLessThan(3000);
    await stillResponsive();
  });
});
