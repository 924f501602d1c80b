/**
 * Threat model (docs/design/threat-model.md#edges-and-nesting): with HTTPS_PROXY set, a target listed in NO_PROXY
 * is dialled directly, and that connection must go through the dial guard like every other one: resolved by the
 * client's resolver, its address checked when the manual is remote. The attack is DNS rebinding: the name answers a
 * public address when it is checked before dispatch and loopback when the connection resolves it. The client's
 * `lookup` option plays the DNS server; every listener is on 127.0.0.1 and counts what reaches it; nothing else is
 * contacted (the public answer is never dialled: the rebinding resolver gives it once, to the check). Through the proxy,
 * a remote manual's tunnel is opened to the address the guard checked (CONNECT 203.0.113.7:port, a TEST-NET address
 * that only the local recording or tunnelling proxy ever sees), so the proxy's own resolver cannot be rebound.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type LookupFunction, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import type * as InternalHttp from '../../src/internal-http.js';
import { UtcpClient } from './packed.js';
import { connectionCounter, listen } from '../helpers/listeners.js';
import { registerRemoteManual } from './remote-manual.js';

const http = (await import(new URL('../../dist/internal-http.js', import.meta.url).href)) as typeof InternalHttp;
const TLS_CERT = readFileSync(new URL('../fixtures/http/test-cert.pem', import.meta.url));
const TLS_KEY = readFileSync(new URL('../fixtures/http/test-key.pem', import.meta.url));

type Answer = { address: string; family: number };

function answer(options: unknown, callback: Parameters<LookupFunction>[2], address: string): void {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Answer[]) => void)(null, [{ address, family: 4 }]);
  else callback(null, address, 4);
}

/**
 * A rebinding resolver: `target` answers a public (TEST-NET-3) address the first time and 127.0.0.1 after;
 * every other name answers 127.0.0.1. Counts the questions about `target`.
 */
function rebinding(target: string): { lookup: LookupFunction; asked(): number } {
  let asked = 0;
  const lookup: LookupFunction = (host, options, callback) => {
    if (host !== target) return answer(options, callback, '127.0.0.1');
    asked += 1;
    answer(options, callback, asked === 1 ? '203.0.113.7' : '127.0.0.1');
  };
  return { lookup, asked: () => asked };
}

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

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

/** Sets HTTPS_PROXY and NO_PROXY for this test only (the suite shares the process: docs/design/testing.md). */
function withProxy(url: string, noProxy: string): void {
  const saved = PROXY_VARIABLES.map((k) => [k, process.env[k]] as const);
  for (const k of PROXY_VARIABLES) delete process.env[k];
  process.env.HTTPS_PROXY = url;
  process.env.NO_PROXY = noProxy;
  onTestFinished(() => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

const open = { type: 'object' } as const;

/** This host's name, and whether the system resolver maps it to loopback (/etc/hosts usually does). */
const self = hostname();
const selfIsLoopback = await systemLookup(self, { family: 4 }).then(
  (a) => a.address.startsWith('127.'),
  () => false,
);

function httpTool(host: string, port: number) {
  return {
    name: 'p',
    inputs: open,
    tool_call_template: { call_template_type: 'http', url: `https://${host}:${port}/x`, http_method: 'GET' },
  };
}

/** Registers `tools` from a manual served over TCP under a name: a REMOTE manual source (the guard is on). */
async function remoteManualClient(tools: unknown[], lookup: LookupFunction): Promise<UtcpClient> {
  return (await registerRemoteManual(tools, lookup, ['tcp', 'http'])).client;
}

describe('a NO_PROXY target is dialled through the dial guard', () => {
  it('a remote manual: a name that rebinds to loopback after the first answer is refused, nothing reached', async () => {
    const target = await connectionCounter();
    const proxy = await recordingProxy();
    withProxy(proxy.url, 'alias.example.test');
    const dns = rebinding('alias.example.test');
    const client = await remoteManualClient([httpTool('alias.example.test', target.port)], dns.lookup);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(dns.asked()).toBeGreaterThanOrEqual(2); // the connection itself asked the client's resolver
    expect(target.count()).toBe(0);
    expect(proxy.targets).toEqual([]);
  });

  it('a local manual: the direct connection resolves with the client resolver (and, unguarded, connects)', async () => {
    const target = await connectionCounter();
    const proxy = await recordingProxy();
    withProxy(proxy.url, 'alias.example.test');
    const client = await UtcpClient.create({}, { lookup: rebinding('other.example.test').lookup });
    onTestFinished(() => client.close());
    const result = await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: JSON.stringify({ tools: [httpTool('alias.example.test', target.port)] }),
      allowed_communication_protocols: ['http'],
    });
    expect(result.errors).toEqual([]);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' }); // the counter drops the TLS handshake
    expect(target.count()).toBeGreaterThan(0);
    expect(proxy.targets).toEqual([]);
  });

  // The same attack with a name the system resolver maps to loopback (this host's name, through /etc/hosts) and no
  // help from the client's resolver beyond the first answer. Runs only where the host name is loopback.
  it.runIf(selfIsLoopback)('a remote manual: this host name in NO_PROXY is refused too', async () => {
    const target = await connectionCounter();
    const proxy = await recordingProxy();
    withProxy(proxy.url, self);
    let asked = 0;
    // First answer public (the check before dispatch), then the system resolver's own answer.
    const lookup: LookupFunction = (host, options, callback) => {
      if (host !== self) return answer(options, callback, '127.0.0.1');
      asked += 1;
      if (asked === 1) return answer(options, callback, '203.0.113.7');
      systemLookup(host, { family: 4 }).then((a) => answer(options, callback, a.address));
    };
    const client = await remoteManualClient([httpTool(self, target.port)], lookup);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY' });
    expect(target.count()).toBe(0);
  });
});

describe('through the proxy, a remote manual tunnels to the address the guard checked', () => {
  /** Answers `address` for every name (the manual's host too: it is dialled directly, outside the proxy). */
  const always =
    (address: string, target: string): LookupFunction =>
    (host, options, callback) =>
      answer(options, callback, host === target ? address : '127.0.0.1');

  it('CONNECT names the checked address, not the name the proxy would resolve again', async () => {
    const proxy = await recordingProxy();
    withProxy(proxy.url, '');
    const client = await remoteManualClient(
      [httpTool('alias.example.test', 8443)],
      always('203.0.113.7', 'alias.example.test'),
    );
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' }); // the recording proxy refuses every tunnel
    expect(proxy.targets).toEqual(['203.0.113.7:8443']);
  });

  it('a name that rebinds to loopback after the first answer is refused before the proxy is asked', async () => {
    const proxy = await recordingProxy();
    withProxy(proxy.url, '');
    const dns = rebinding('alias.example.test');
    const client = await remoteManualClient([httpTool('alias.example.test', 8443)], dns.lookup);
    const error = await client.callTool('m.p', {}, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'URL_POLICY', message: expect.stringContaining('loopback') });
    expect(dns.asked()).toBe(2); // the check before dispatch, then the CONNECT's own
    expect(proxy.targets).toEqual([]);
  });

  it('inside the pinned tunnel TLS still verifies the name, and the request carries it as Host', async () => {
    const hosts: string[] = [];
    const server = createHttpsServer({ key: TLS_KEY, cert: TLS_CERT }, (req, res) => {
      hosts.push(String(req.headers.host));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('secure');
    });
    const port = await listen(server as unknown as Server);
    const proxy = await tunnellingProxy(port);
    const dispatcher = http.createHttpDispatcher({
      env: { HTTPS_PROXY: proxy.url },
      remote: true,
      lookup: always('203.0.113.7', 'api.example.test'),
      connect: { ca: [...rootCertificates, TLS_CERT.toString()] },
    });
    onTestFinished(() => dispatcher.destroy());
    const res = await request(`https://api.example.test:${port}/x`, {
      dispatcher,
      signal: AbortSignal.timeout(10_000),
    });
    expect(await res.body.text()).toBe('secure');
    expect(proxy.targets).toEqual([`203.0.113.7:${port}`]);
    expect(hosts).toEqual([`api.example.test:${port}`]);
  });
});

/** A CONNECT proxy that records each target and tunnels every one of them to `port` on 127.0.0.1. */
async function tunnellingProxy(port: number): Promise<{ url: string; targets: string[] }> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => res.writeHead(502).end());
  server.on('connect', (req, client: Socket) => {
    targets.push(String(req.url));
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
    }
  });
  const proxyPort = await listen(server);
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
  });
  return { url: `http://127.0.0.1:${proxyPort}`, targets };
}
