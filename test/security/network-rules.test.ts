/**
 * Network rules of docs/design/threat-model.md, each attacked through the public API:
 * remote→loopback at call time (placeholders) and at dial time (names resolving to loopback),
 * deadlines during DNS/connect, cross-origin header allow-list, path dot-segments, per-origin pool cap.
 * Every server listens on 127.0.0.1; "remote" names are resolved to it by the client's `lookup` option.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from './packed.js';
import { connectionCounter, listen } from '../helpers/listeners.js';
import { registerRemoteManual } from './remote-manual.js';

/** Resolves every name to 127.0.0.1: plays DNS entries (or /etc/hosts aliases) that point at loopback. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  else callback(null, '127.0.0.1', 4);
};

/** A resolver that never answers: a blackholed DNS server. */
const neverAnswers: LookupFunction = () => {};

/** The tools as a REMOTE manual (or, with `remote: false`, the same server registered as a local one). */
function remoteManualClient(tools: unknown[], options: { remote?: boolean } = {}) {
  return registerRemoteManual(tools, toLoopback, ['tcp', 'udp', 'http', 'websocket'], {
    ...(options.remote === false ? { host: '127.0.0.1' } : {}),
  });
}

const open = { type: 'object' } as const;

describe('remote → loopback rule at call time (placeholders)', () => {
  it('refuses a remote manual tool whose {host} placeholder is filled with a loopback address; a local manual may', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 'get',
      inputs: open,
      tool_call_template: { call_template_type: 'http', url: `https://{host}:${target.port}/x`, http_method: 'GET' },
    };
    const { client } = await remoteManualClient([tool]);
    for (const host of ['127.0.0.1', 'localhost', '127.1.2.3']) {
      await expect(client.callTool('m.get', { host }, { timeoutMs: 5000 })).rejects.toMatchObject({
        code: 'URL_POLICY',
      });
    }
    expect(target.count()).toBe(0);

    const local = await remoteManualClient([tool], { remote: false });
    // The same tool from a local (loopback) manual source passes the rule and dials (the TLS handshake then fails:
    // the server closes the connection before any response, so the GET is tried 1 + 2 times by the default retries,
    // docs/design/resilience.md#retries).
    const error = await local.client
      .callTool('m.get', { host: '127.0.0.1' }, { timeoutMs: 5000 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(target.count()).toBe(3);
  });
});

describe('dial guard: the resolved address decides (names resolving to loopback)', () => {
  it('refuses http, tcp, udp and websocket tools of a remote manual whose host name resolves to loopback, before any byte is sent', async () => {
    const target = await connectionCounter();
    const tools = [
      {
        name: 'h',
        inputs: open,
        tool_call_template: {
          call_template_type: 'http',
          url: `https://alias.example.test:${target.port}/x`,
          http_method: 'GET',
        },
      },
      {
        name: 't',
        inputs: open,
        tool_call_template: { call_template_type: 'tcp', host: 'alias.example.test', port: target.port, timeout: 5000 },
      },
      {
        name: 'u',
        inputs: open,
        tool_call_template: { call_template_type: 'udp', host: 'alias.example.test', port: target.port, timeout: 5000 },
      },
      {
        name: 'w',
        inputs: open,
        tool_call_template: {
          call_template_type: 'websocket',
          url: `wss://alias.example.test:${target.port}/ws`,
          timeout: 5,
        },
      },
    ];
    const { client } = await remoteManualClient(tools);
    for (const name of ['m.h', 'm.t', 'm.u', 'm.w']) {
      const error = await client.callTool(name, {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
      expect(error, name).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    }
    expect(target.count()).toBe(0);
  });

  it('treats a host with surrounding spaces as the host itself: " 127.0.0.1" from a remote manual never connects', async () => {
    const target = await connectionCounter();
    const tool = {
      name: 't',
      inputs: open,
      tool_call_template: { call_template_type: 'tcp', host: ' 127.0.0.1 ', port: target.port, timeout: 5000 },
    };
    const { client, result } = await remoteManualClient([tool]);
    // Dropped at registration (the rule recognises the trimmed literal) ...
    expect(result.manual.tools).toEqual([]);
    expect(result.warnings.join(' ')).toContain('loopback');
    await expect(client.callTool('m.t', {})).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(target.count()).toBe(0);
  });
});

function localHttpManual(tools: unknown[]) {
  return {
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ utcp_version: '1.0.0', manual_version: '1.0.0', tools }),
    allowed_communication_protocols: ['http', 'sse', 'streamable_http', 'graphql'],
  };
}

describe('deadlines during DNS lookup and TCP connect', () => {
  const tools = [
    {
      name: 'http',
      inputs: open,
      tool_call_template: { call_template_type: 'http', url: 'https://hang.example.test/x', http_method: 'GET' },
    },
    {
      name: 'sse',
      inputs: open,
      tool_call_template: { call_template_type: 'sse', url: 'https://hang.example.test/events' },
    },
    {
      name: 'stream',
      inputs: open,
      tool_call_template: { call_template_type: 'streamable_http', url: 'https://hang.example.test/s' },
    },
    {
      name: 'gql',
      inputs: open,
      tool_call_template: {
        call_template_type: 'graphql',
        url: 'https://hang.example.test/graphql',
        operation_type: 'query',
        query: '{ hello }',
      },
    },
  ];

  it('timeoutMs fires while the resolver never answers (http, sse, streamable_http, graphql)', async () => {
    const client = await UtcpClient.create({}, { lookup: neverAnswers });
    onTestFinished(() => client.close());
    expect((await client.registerManual(localHttpManual(tools))).errors).toEqual([]);
    for (const name of ['m.http', 'm.sse', 'm.stream', 'm.gql']) {
      const started = Date.now();
      await expect(client.callTool(name, {}, { timeoutMs: 200 }), name).rejects.toMatchObject({ code: 'TIMEOUT' });
      expect(Date.now() - started, name).toBeLessThan(5000); // undici's own connect timeout is 10 s
    }
  });

  it('an AbortSignal ends a call stuck in name resolution', async () => {
    const client = await UtcpClient.create({}, { lookup: neverAnswers });
    onTestFinished(() => client.close());
    await client.registerManual(localHttpManual(tools));
    for (const name of ['m.http', 'm.sse', 'm.stream', 'm.gql']) {
      const controller = new AbortController();
      const call = client.callTool(name, {}, { signal: controller.signal });
      setImmediate(() => controller.abort());
      await expect(call, name).rejects.toMatchObject({ code: 'ABORTED' });
    }
  });

  it('close() during a pending connect ends the call at once with CLIENT_CLOSED', async () => {
    const client = await UtcpClient.create({}, { lookup: neverAnswers });
    await client.registerManual(localHttpManual(tools));
    const calls = ['m.http', 'm.sse', 'm.stream', 'm.gql'].map((name) =>
      client.callTool(name, {}).catch((e: unknown) => e),
    );
    await new Promise((r) => setImmediate(r));
    await client.close();
    for (const error of await Promise.all(calls)) expect(error).toMatchObject({ code: 'CLIENT_CLOSED' });
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function httpServer(handler: Handler) {
  const requests: IncomingMessage[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((req, res) => {
    requests.push(req);
    res.setHeader('content-type', 'application/json');
    handler(req, res);
  });
  server.on('connection', (s) => sockets.add(s));
  const port = await listen(server);
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
  });
  return { url: `http://127.0.0.1:${port}`, requests, sockets };
}

describe('cross-origin redirects forward only safe headers', () => {
  it('keeps X-Password and other static template headers on the first origin', async () => {
    const other = await httpServer((_req, res) => res.end('"ok"'));
    const start = await httpServer((_req, res) => {
      res.writeHead(302, { location: `${other.url}/landing` });
      res.end();
    });
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    await client.registerManual(
      localHttpManual([
        {
          name: 'r',
          inputs: open,
          tool_call_template: {
            call_template_type: 'http',
            url: `${start.url}/a`,
            http_method: 'GET',
            headers: { 'X-Password': 'hunter2', 'X-Internal': 'i', Accept: 'application/json' },
          },
        },
      ]),
    );
    await client.callTool('m.r', {});
    expect(start.requests[0].headers['x-password']).toBe('hunter2');
    const forwarded = other.requests[0].headers;
    expect(forwarded['x-password']).toBeUndefined();
    expect(forwarded['x-internal']).toBeUndefined();
    expect(forwarded.accept).toBe('application/json');
  });
});

describe('path parameters never leave the URL path', () => {
  it('refuses "." and ".." (alone or combined) with INVALID_ARGUMENTS and sends nothing; encoded forms stay literal', async () => {
    const api = await httpServer((req, res) => res.end(JSON.stringify(req.url)));
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    await client.registerManual(
      localHttpManual([
        {
          name: 'f',
          inputs: open,
          tool_call_template: { call_template_type: 'http', url: `${api.url}/files/{name}/meta`, http_method: 'GET' },
        },
        {
          name: 'g',
          inputs: open,
          tool_call_template: { call_template_type: 'http', url: `${api.url}/files/{a}{b}`, http_method: 'GET' },
        },
      ]),
    );
    for (const name of ['..', '.'])
      await expect(client.callTool('m.f', { name })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await expect(client.callTool('m.g', { a: '', b: '..' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await expect(client.callTool('m.g', { a: '.', b: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(api.requests).toHaveLength(0);
    expect(await client.callTool('m.f', { name: '%2e%2e' })).toBe('/files/%252e%252e/meta');
    expect(await client.callTool('m.f', { name: '../../admin' })).toBe('/files/..%2F..%2Fadmin/meta');
    expect(await client.callTool('m.g', { a: 'v1.', b: '.2' })).toBe('/files/v1..2');
  });
});

describe('per-origin connection cap', () => {
  /** Holds responses until `release` requests are waiting (or every call arrived), then answers them all. */
  async function gatedServer(total: number, release: number) {
    let arrived = 0;
    let waiting: ServerResponse[] = [];
    const server = await httpServer((_req, res) => {
      arrived += 1;
      waiting.push(res);
      if (waiting.length >= release || arrived === total) {
        for (const r of waiting) r.end('1');
        waiting = [];
      }
    });
    return server;
  }

  it('opens at most limits.max_connections_per_origin sockets under 300 concurrent calls', async () => {
    const total = 300;
    const server = await gatedServer(total, 8);
    const client = await UtcpClient.create({ limits: { max_connections_per_origin: 8 } });
    onTestFinished(() => client.close());
    await client.registerManual(
      localHttpManual([
        {
          name: 'n',
          inputs: open,
          tool_call_template: { call_template_type: 'http', url: `${server.url}/n`, http_method: 'GET' },
        },
      ]),
    );
    const results = await Promise.all(Array.from({ length: total }, () => client.callTool('m.n', {})));
    expect(results.every((r) => r === 1)).toBe(true);
    expect(server.sockets.size).toBeLessThanOrEqual(8);
  });

  it('caps at 64 per origin by default', async () => {
    const total = 300;
    const server = await gatedServer(total, 64);
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    await client.registerManual(
      localHttpManual([
        {
          name: 'n',
          inputs: open,
          tool_call_template: { call_template_type: 'http', url: `${server.url}/n`, http_method: 'GET' },
        },
      ]),
    );
    const results = await Promise.all(Array.from({ length: total }, () => client.callTool('m.n', {})));
    expect(results.every((r) => r === 1)).toBe(true);
    expect(server.sockets.size).toBeLessThanOrEqual(64);
    expect(server.sockets.size).toBeGreaterThan(1);
  });
});
