/**
 * The dial guard (docs/design/threat-model.md#dial-guard) on the connections not covered by
 * network-rules.test.ts: gRPC channels, OAuth2 token requests and requests sent through an HTTP proxy.
 * Each attack is a remote manual whose tool names a host that resolves to loopback (the client's `lookup`
 * option plays the DNS record or /etc/hosts alias); every listener is on 127.0.0.1 and counts what reaches it.
 */
import { createServer as createHttpServer } from 'node:http';
import { type LookupFunction, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, UtcpError } from './packed.js';
import { connectionCounter, listen } from '../helpers/listeners.js';
import { registerRemoteManual } from './remote-manual.js';

/** Resolves every name to 127.0.0.1. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  else callback(null, '127.0.0.1', 4);
};

/** Serves `tools` as a UTCP manual over TCP; registered under a name, it is a REMOTE manual source. */
async function remoteManualClient(tools: unknown[], lookup: LookupFunction = toLoopback): Promise<UtcpClient> {
  const { client, result } = await registerRemoteManual(tools, lookup, ['tcp', 'http', 'grpc', 'graphql', 'mcp']);
  expect(result.manual.tools.map((t) => t.name)).toEqual(tools.map((t) => `m.${(t as { name: string }).name}`));
  return client;
}

/** The same tools from a local (inline) manual: the guard is off, so the connection happens. */
async function localManualClient(tools: unknown[]): Promise<UtcpClient> {
  const client = await UtcpClient.create({}, { lookup: toLoopback });
  onTestFinished(() => client.close());
  const result = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ utcp_version: '1.0.0', manual_version: '1.0.0', tools }),
    allowed_communication_protocols: ['http', 'grpc'],
  });
  expect(result.errors).toEqual([]);
  return client;
}

const open = { type: 'object' } as const;

describe('gRPC', () => {
  it('refuses a channel to a name that resolves to loopback, before connecting', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 'g',
      inputs: open,
      tool_call_template: { call_template_type: 'grpc', host: 'alias.example.test', port: target.port, use_ssl: true },
    };
    const client = await remoteManualClient([tool]);
    const error = await client.callTool('m.g', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(target.count()).toBe(0);
  });

  it('a local manual still dials the name (grpc-js resolves it itself)', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 'g',
      inputs: open,
      tool_call_template: { call_template_type: 'grpc', host: '127.0.0.1', port: target.port },
    };
    const client = await localManualClient([tool]);
    const error = await client.callTool('m.g', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expect.not.stringMatching(/^URL_POLICY$/) });
    expect(target.count()).toBeGreaterThan(0);
  });
});

describe('OAuth2 token URLs', () => {
  const tool = (tokenPort: number, apiPort: number) => ({
    name: 'o',
    inputs: open,
    tool_call_template: {
      call_template_type: 'http',
      url: `https://api.example.test:${apiPort}/x`,
      http_method: 'GET',
      auth: {
        auth_type: 'oauth2',
        token_url: `https://auth.example.test:${tokenPort}/token`,
        client_id: 'id',
        client_secret: 'secret-value',
      },
    },
  });

  it('a remote manual cannot make the client request a token from a name that resolves to loopback', async () => {
    const token = await connectionCounter();
    const api = await connectionCounter();
    const client = await remoteManualClient([tool(token.port, api.port)]);
    const error = await client.callTool('m.o', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(token.count()).toBe(0);
    expect(api.count()).toBe(0);
  });

  it('the same token URL from a local manual is requested (the guard follows provenance)', async () => {
    const token = await connectionCounter();
    const api = await connectionCounter();
    const client = await localManualClient([tool(token.port, api.port)]);
    const error = await client.callTool('m.o', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' }); // the counter drops the TLS handshake
    expect(token.count()).toBeGreaterThan(0);
  });
});

describe('through an HTTP proxy (HTTPS_PROXY)', () => {
  /** A forward proxy that records CONNECT targets and refuses them all. */
  async function recordingProxy(): Promise<{ url: string; targets: string[] }> {
    const targets: string[] = [];
    const server = createHttpServer((_req, res) => res.writeHead(403).end());
    server.on('connect', (req, socket: Socket) => {
      targets.push(String(req.url));
      socket.on('error', () => {});
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    });
    const port = await listen(server);
    return { url: `http://127.0.0.1:${port}`, targets };
  }

  function withProxy(url: string): void {
    const saved = {
      HTTPS_PROXY: process.env.HTTPS_PROXY,
      https_proxy: process.env.https_proxy,
      NO_PROXY: process.env.NO_PROXY,
      no_proxy: process.env.no_proxy,
    };
    process.env.HTTPS_PROXY = url;
    delete process.env.https_proxy;
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    onTestFinished(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
  }

  const tool = {
    name: 'p',
    inputs: open,
    tool_call_template: { call_template_type: 'http', url: 'https://alias.example.test:8443/x', http_method: 'GET' },
  };

  it('a remote manual: the target name is resolved by the guard first, and the proxy is never asked', async () => {
    const proxy = await recordingProxy();
    withProxy(proxy.url);
    const client = await remoteManualClient([tool]);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(proxy.targets).toEqual([]);
  });

  it('a remote manual: a name this host cannot resolve is left to the proxy (often the only resolver there is)', async () => {
    const proxy = await recordingProxy();
    withProxy(proxy.url);
    const onlyManuals: LookupFunction = (host, options, callback) => {
      if (host === 'manuals.example.test') return toLoopback(host, options, callback);
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      callback(error, '', 0);
    };
    const client = await remoteManualClient([tool], onlyManuals);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' }); // the recording proxy refuses the tunnel
    expect(proxy.targets).toEqual(['alias.example.test:8443']);
  });

  it('a local manual goes through the proxy as before', async () => {
    const proxy = await recordingProxy();
    withProxy(proxy.url);
    const client = await localManualClient([tool]);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(proxy.targets).toEqual(['alias.example.test:8443']);
  });
});

describe('GraphQL subscriptions over WebSocket', () => {
  it('refuses a subscription socket to a name that resolves to loopback, before connecting', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 's',
      inputs: open,
      tool_call_template: {
        call_template_type: 'graphql',
        url: `https://alias.example.test:${target.port}/graphql`,
        operation_type: 'subscription',
        subscription_transport: 'websocket',
        query: 'subscription { tick }',
      },
    };
    const client = await remoteManualClient([tool]);
    const consume = async () => {
      for await (const _ of client.callToolStreaming('m.s', {}, { timeoutMs: 5000 })) {
        // nothing arrives
      }
    };
    const error = await consume().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(target.count()).toBe(0);
  });
});

describe('MCP servers over HTTP named by a remote manual', () => {
  it('refuses to connect to a server URL whose name resolves to loopback', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 'x',
      inputs: open,
      tool_call_template: {
        call_template_type: 'mcp',
        config: { mcpServers: { s: { url: `https://alias.example.test:${target.port}/mcp`, transport: 'http' } } },
      },
    };
    const client = await remoteManualClient([tool]);
    const error = await client.callTool('m.x', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpError);
    expect((error as Error).message).toMatch(/loopback/);
    expect(target.count()).toBe(0);
  });
});
