/**
 * Abort and timeout mid-flight, through UtcpClient, for the transports whose own tests only cover
 * them at the transport level or not at all (http, sse, streamable_http, websocket, tcp, udp,
 * graphql; grpc, mcp and cli have theirs in test/transports). Each server receives the call and
 * never answers: aborting the caller's signal must reject promptly with ABORTED, `timeoutMs` with
 * TIMEOUT, and the connection the call opened must be closed afterwards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { UtcpClient, type UtcpError } from '../../src/index.js';
import { deferred, startServer, type TestServer } from '../fixtures/http/server.js';
import { startTcpServer, type TcpTestServer } from '../fixtures/sockets/tcp-server.js';
import { startUdpServer, type UdpTestServer } from '../fixtures/sockets/udp-server.js';
import { startWsServer, type WsTestServer } from '../fixtures/sockets/ws-server.js';

/** How soon after the abort the call must reject. */
const PROMPT_MS = 1000;

interface Env {
  client: UtcpClient;
  http: TestServer;
  tcp: TcpTestServer;
  udp: UdpTestServer;
  ws: WsTestServer;
  /** Resolves when the http server has received a request for the path (and leaves it hanging). */
  arrived(path: string): Promise<unknown>;
}

let env: Env | undefined;

async function setup(): Promise<Env> {
  const arrivals = new Map<string, ReturnType<typeof deferred<void>>>();
  const arrival = (path: string) => {
    if (!arrivals.has(path)) arrivals.set(path, deferred<void>());
    return arrivals.get(path)!;
  };
  // Every request hangs: the server sends nothing back (for SSE/streamable, not even headers).
  const http = await startServer((req) => arrival(req.url ?? '').resolve());
  const tcp = await startTcpServer();
  const udp = await startUdpServer();
  const ws = await startWsServer();
  const tool = (name: string, tool_call_template: Record<string, unknown>) => ({
    name,
    description: name,
    inputs: {},
    outputs: {},
    tags: [],
    tool_call_template,
  });
  const manual = {
    utcp_version: '1.0.1',
    manual_version: '1',
    tools: [
      tool('http', { call_template_type: 'http', url: `${http.url}/http`, http_method: 'GET' }),
      tool('sse', { call_template_type: 'sse', url: `${http.url}/sse` }),
      tool('streamable', { call_template_type: 'streamable_http', url: `${http.url}/streamable` }),
      tool('graphql', { call_template_type: 'graphql', url: `${http.url}/graphql`, query: 'query { slow }' }),
      tool('tcp', {
        call_template_type: 'tcp',
        host: '127.0.0.1',
        port: tcp.port,
        framing_strategy: 'delimiter',
        message_delimiter: '\n',
      }),
      tool('udp', { call_template_type: 'udp', host: '127.0.0.1', port: udp.port }),
      tool('ws', { call_template_type: 'websocket', url: ws.url }),
    ],
  };
  const client = await UtcpClient.create();
  const registered = await client.registerManual({
    name: 'slow',
    call_template_type: 'text',
    content: JSON.stringify(manual),
    allowed_communication_protocols: ['http', 'sse', 'streamable_http', 'graphql', 'tcp', 'udp', 'websocket'],
  });
  expect(registered.errors).toEqual([]);
  expect(registered.manual.tools).toHaveLength(7);
  return { client, http, tcp, udp, ws, arrived: (path) => arrival(path).promise };
}

afterEach(async () => {
  if (!env) return;
  await env.client.close();
  await Promise.all([env.http.close(), env.tcp.close(), env.udp.close(), env.ws.close()]);
  env = undefined;
});

/** Starts the call, waits until the server holds it, aborts, and returns the error and how long the rejection took. */
async function abortMidFlight(
  name: string,
  arrived: () => Promise<unknown>,
): Promise<{ error: UtcpError; ms: number }> {
  const controller = new AbortController();
  const call = env!.client.callTool(name, {}, { signal: controller.signal, timeoutMs: 20_000 });
  const settled = call.then(
    () => {
      throw new Error(`${name} resolved`);
    },
    (error: UtcpError) => error,
  );
  await arrived();
  const t0 = Date.now();
  controller.abort();
  const error = await settled;
  return { error, ms: Date.now() - t0 };
}

async function timesOut(name: string): Promise<UtcpError> {
  return env!.client.callTool(name, {}, { timeoutMs: 150 }).then(
    () => {
      throw new Error(`${name} resolved`);
    },
    (error: UtcpError) => error,
  );
}

const httpCases = [
  ['http', '/http'],
  ['sse', '/sse'],
  ['streamable_http', '/streamable'],
  ['graphql', '/graphql'],
] as const;

describe.each(httpCases)('%s call', (_kind, path) => {
  const name = `slow.${path === '/streamable' ? 'streamable' : path.slice(1)}`;

  it('rejects with ABORTED when the caller aborts mid-flight, and closes the connection', async () => {
    env = await setup();
    const { error, ms } = await abortMidFlight(name, () => env!.arrived(path));
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(ms).toBeLessThan(PROMPT_MS);
    await env.http.allSocketsClosed();
    expect(env.http.openSockets.size).toBe(0);
  });

  it('rejects with TIMEOUT after timeoutMs', async () => {
    env = await setup();
    const error = await timesOut(name);
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    await env.arrived(path); // the server did receive the call
    await env.http.allSocketsClosed();
    expect(env.http.openSockets.size).toBe(0);
  });
});

describe('tcp call', () => {
  it('rejects with ABORTED when the caller aborts mid-flight, and closes the connection', async () => {
    env = await setup();
    let socket: Socket | undefined;
    const { error, ms } = await abortMidFlight('slow.tcp', async () => {
      socket = await env!.tcp.nextConnection();
    });
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(ms).toBeLessThan(PROMPT_MS);
    await env.tcp.closedConnection(0);
    expect(socket!.destroyed || socket!.readableEnded).toBe(true);
  });

  it('rejects with TIMEOUT after timeoutMs', async () => {
    env = await setup();
    expect(await timesOut('slow.tcp')).toMatchObject({ code: 'TIMEOUT' });
    await env.tcp.closedConnection(0);
  });
});

describe('udp call', () => {
  it('rejects with ABORTED when the caller aborts mid-flight', async () => {
    env = await setup();
    const { error, ms } = await abortMidFlight('slow.udp', () => env!.udp.nextDatagram());
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it('rejects with TIMEOUT after timeoutMs', async () => {
    env = await setup();
    expect(await timesOut('slow.udp')).toMatchObject({ code: 'TIMEOUT' });
  });
});

describe('websocket call', () => {
  it('rejects with ABORTED when the caller aborts mid-flight', async () => {
    env = await setup();
    const { error, ms } = await abortMidFlight('slow.ws', async () => (await env!.ws.peer(0)).message(0));
    expect(error).toMatchObject({ code: 'ABORTED' });
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it('rejects with TIMEOUT after timeoutMs', async () => {
    env = await setup();
    expect(await timesOut('slow.ws')).toMatchObject({ code: 'TIMEOUT' });
    expect(env.ws.peers[0].messages).toHaveLength(1);
  });

  it('closes the pooled connection when the client closes after an aborted call', async () => {
    env = await setup();
    await abortMidFlight('slow.ws', async () => (await env!.ws.peer(0)).message(0));
    await env.client.close();
    await env.ws.peers[0].closed;
  });
});
