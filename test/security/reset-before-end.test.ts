/**
 * Threat model (docs/design/threat-model.md#edges-and-nesting): a response body without length framing (no
 * Content-Length, not chunked) is complete only when the server closed the connection cleanly (FIN); a TCP reset
 * ends it incomplete (RFC 9112 §8), and a chunked body must end with its last chunk. A raw `net` server on
 * 127.0.0.1 writes the response by hand, then resets (`resetAndDestroy()`) or ends the connection. The http
 * call, the SSE stream and the streamable_http stream must fail with a TransportError on a reset (the SSE and
 * NDJSON cases reset at an item boundary, where the body itself looks whole), and return the body on a clean end.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { connect, createServer, type LookupFunction, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { rootCertificates, TLSSocket } from 'node:tls';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type * as InternalHttp from '../../src/internal-http.js';
import { TransportError, UtcpClient } from './packed.js';

const http = (await import(new URL('../../dist/internal-http.js', import.meta.url).href)) as typeof InternalHttp;
const CERT_PATH = new URL('../fixtures/http/test-cert.pem', import.meta.url);
const TLS_CERT = readFileSync(CERT_PATH);
const TLS_KEY = readFileSync(new URL('../fixtures/http/test-key.pem', import.meta.url));

/** Resolves every name to 127.0.0.1 (the certificate covers *.example.test). */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  else callback(null, '127.0.0.1', 4);
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type End = 'reset' | 'fin';

/**
 * A raw HTTP/1.1 server: answers each request with `head` + `body` as written, then ends the connection as
 * `end` says. Resolves its port.
 */
async function rawServer(head: string, body: string, end: End, options: { tls?: boolean } = {}): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((raw) => {
    sockets.add(raw);
    raw.on('error', () => {});
    raw.on('close', () => sockets.delete(raw));
    // TLS: the reset is sent on the TCP socket under the TLS session (no close_notify, no FIN).
    const socket = options.tls ? new TLSSocket(raw, { isServer: true, key: TLS_KEY, cert: TLS_CERT }) : raw;
    socket.on('error', () => {});
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      seen = '';
      socket.write(`HTTP/1.1 200 OK\r\n${head}\r\n\r\n${body}`, () => {
        // Let the client read the bytes first, so the reset arrives after them (as it would from a far peer).
        setTimeout(() => (end === 'reset' ? raw.resetAndDestroy() : socket.end()), 20);
      });
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
  return (server.address() as { port: number }).port;
}

/** A client with one tool `m.t` of the given template (an inline manual). */
async function clientFor(template: Record<string, unknown>): Promise<UtcpClient> {
  const client = await UtcpClient.create({});
  cleanups.push(() => client.close());
  const tools = [{ name: 't', inputs: { type: 'object', properties: {} }, tool_call_template: template }];
  const result = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: [template.call_template_type as string],
  });
  expect(result.errors).toEqual([]);
  return client;
}

async function callOutcome(client: UtcpClient): Promise<{ result?: unknown; error?: unknown }> {
  return client.callTool('m.t', {}, { timeoutMs: 10_000 }).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
}

async function streamOf(client: UtcpClient): Promise<{ items: unknown[]; error?: unknown }> {
  const items: unknown[] = [];
  try {
    for await (const item of client.callToolStreaming('m.t', {}, { timeoutMs: 10_000 })) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items };
}

function expectFailedTransport(outcome: { result?: unknown; error?: unknown }, what: string): void {
  expect(outcome.result).toBeUndefined();
  expect(outcome.error).toBeInstanceOf(TransportError);
  expect(outcome.error).toMatchObject({ code: 'TRANSPORT_FAILED' });
  expect((outcome.error as Error).message).toContain(what);
}

const CLOSE_DELIMITED = 'Content-Type: text/plain\r\nConnection: close';

describe('http: a close-delimited body is whole only after a clean close', () => {
  it('a reset after part of the body fails the call instead of returning the part', async () => {
    const port = await rawServer(CLOSE_DELIMITED, 'the first half of a long answer', 'reset');
    const client = await clientFor({ call_template_type: 'http', url: `http://127.0.0.1:${port}/x` });
    expectFailedTransport(await callOutcome(client), 'HTTP call of tool m.t');
  });

  it('the same body ended by FIN is returned whole', async () => {
    const port = await rawServer(CLOSE_DELIMITED, 'the whole answer', 'fin');
    const client = await clientFor({ call_template_type: 'http', url: `http://127.0.0.1:${port}/x` });
    expect(await callOutcome(client)).toEqual({ result: 'the whole answer' });
  });

  it('a chunked body without its last chunk fails, whether the connection is reset or closed', async () => {
    for (const end of ['reset', 'fin'] as const) {
      const port = await rawServer('Content-Type: text/plain\r\nTransfer-Encoding: chunked', '5\r\nhello\r\n', end);
      const client = await clientFor({ call_template_type: 'http', url: `http://127.0.0.1:${port}/x` });
      expectFailedTransport(await callOutcome(client), 'HTTP call of tool m.t');
    }
  });
});

describe('https: the same rule on TLS connections, direct and through a CONNECT tunnel', () => {
  const ca = [...rootCertificates, readFileSync(CERT_PATH, 'utf8')];

  /** GET through the package's own dispatcher (`utcp-kit/internal/http`, as the client builds it). */
  async function get(url: string, env: NodeJS.ProcessEnv): Promise<{ text?: string; error?: unknown }> {
    const dispatcher = http.createHttpDispatcher({ env, connect: { lookup: toLoopback, ca } });
    cleanups.push(() => dispatcher.destroy());
    try {
      const res = await request(url, { dispatcher, signal: AbortSignal.timeout(10_000) });
      return { text: await res.body.text() };
    } catch (error) {
      return { error };
    }
  }

  for (const via of ['direct', 'proxy'] as const) {
    it(`${via}: a reset after part of the body is an error; FIN returns the body`, async () => {
      for (const end of ['reset', 'fin'] as const) {
        const port = await rawServer(CLOSE_DELIMITED, 'part of the answer', end, { tls: true });
        const env = via === 'proxy' ? { HTTPS_PROXY: (await tunnelProxy(port)).url } : {};
        const outcome = await get(`https://api.example.test:${port}/x`, env);
        if (end === 'fin') expect(outcome).toEqual({ text: 'part of the answer' });
        else expect(outcome.error).toMatchObject({ code: 'UND_ERR_SOCKET' });
      }
    });
  }
});

/** A CONNECT proxy on 127.0.0.1 that tunnels every target to `port` on 127.0.0.1 and passes a reset on. */
async function tunnelProxy(port: number): Promise<{ url: string; tunnels: string[] }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createHttpServer((_req, res) => res.writeHead(502).end());
  proxy.on('connect', (req: IncomingMessage, client: Socket) => {
    tunnels.push(String(req.url));
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.resetAndDestroy());
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, tunnels };
}

describe('sse: a reset at an event boundary is not the end of the stream', () => {
  const head = 'Content-Type: text/event-stream\r\nConnection: close';
  const body = 'data: {"n":1}\n\ndata: {"n":2}\n\n';
  const sse = (port: number) =>
    clientFor({ call_template_type: 'sse', url: `http://127.0.0.1:${port}/feed`, reconnect: false });

  it('callTool and callToolStreaming fail after the events that arrived', async () => {
    const client = await sse(await rawServer(head, body, 'reset'));
    expectFailedTransport(await callOutcome(client), 'SSE call of tool m.t');
    const { items, error } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    expectFailedTransport({ error }, 'SSE call of tool m.t');
  });

  it('the same events ended by FIN end both paths cleanly', async () => {
    const client = await sse(await rawServer(head, body, 'fin'));
    expect(await callOutcome(client)).toEqual({ result: [{ n: 1 }, { n: 2 }] });
    expect(await streamOf(client)).toEqual({ items: [{ n: 1 }, { n: 2 }] });
  });
});

describe('streamable_http: a reset at a line or event boundary is not the end of the stream', () => {
  const tool = (port: number) =>
    clientFor({ call_template_type: 'streamable_http', url: `http://127.0.0.1:${port}/s` });
  const ndjson = 'Content-Type: application/x-ndjson\r\nConnection: close';

  it('NDJSON: both paths fail after the whole lines', async () => {
    const client = await tool(await rawServer(ndjson, '{"n":1}\n{"n":2}\n', 'reset'));
    expectFailedTransport(await callOutcome(client), 'Streamable HTTP call of tool m.t');
    const { items, error } = await streamOf(client);
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
    expectFailedTransport({ error }, 'Streamable HTTP call of tool m.t');
  });

  it('an event stream reset after a complete event fails', async () => {
    const client = await tool(
      await rawServer('Content-Type: text/event-stream\r\nConnection: close', 'data: 1\n\n', 'reset'),
    );
    expectFailedTransport(await callOutcome(client), 'Streamable HTTP call of tool m.t');
  });

  it('NDJSON ended by FIN ends both paths cleanly', async () => {
    const client = await tool(await rawServer(ndjson, '{"n":1}\n{"n":2}\n', 'fin'));
    expect(await callOutcome(client)).toEqual({ result: [{ n: 1 }, { n: 2 }] });
    expect(await streamOf(client)).toEqual({ items: [{ n: 1 }, { n: 2 }] });
  });
});
