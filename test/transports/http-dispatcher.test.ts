import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type LookupFunction, type Socket } from 'node:net';
import { rootCertificates } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { HttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { RoutingDispatcher, proxyConfigured } from '../../src/http/http-dispatcher.js';
import { callOptions, makeTool, remoteUrl, testContext } from '../fixtures/http/harness.js';
import { json, startHttpsServer, startServer, TEST_CERT_PATH, type TestServer } from '../fixtures/http/server.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('../fixtures/http/request-once.mjs', import.meta.url));

async function https(): Promise<TestServer> {
  const s = await startHttpsServer((_req, res) => json(res, 'secure'));
  onTestFinished(() => s.close());
  return s;
}

/** A CONNECT proxy on 127.0.0.1 that records each tunnel target and tunnels everything to `targetPort`. */
async function proxyServer(targetPort: number) {
  const tunnels: string[] = [];
  const plain: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((req, res) => {
    plain.push(req.url ?? '');
    res.writeHead(502);
    res.end();
  });
  proxy.on('connect', (req: IncomingMessage, client: Socket) => {
    tunnels.push(req.url ?? '');
    const upstream = connect(targetPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as { port: number }).port;
  onTestFinished(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${port}`, tunnels, plain };
}

const toLoopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
      { address: '127.0.0.1', family: 4 },
    ]);
  else callback(null, '127.0.0.1', 4);
};
const connectOptions = { lookup: toLoopback, ca: [...rootCertificates, readFileSync(TEST_CERT_PATH, 'utf8')] };

async function get(dispatcher: RoutingDispatcher, url: string): Promise<unknown> {
  const ctx = testContext();
  ctx.shared(
    'http.dispatcher',
    () => dispatcher,
    (d) => d.destroy(),
  );
  const template: HttpCallTemplate = { call_template_type: 'http', url };
  return createHttpTransport(ctx).callTool(makeTool('t', template), {}, template, callOptions(template));
}

describe('proxy environment variables', () => {
  it('detects HTTPS_PROXY/HTTP_PROXY in either case', () => {
    expect(proxyConfigured({})).toBe(false);
    expect(proxyConfigured({ HTTPS_PROXY: 'http://p' })).toBe(true);
    expect(proxyConfigured({ http_proxy: 'http://p' })).toBe(true);
    expect(proxyConfigured({ NO_PROXY: '*' })).toBe(false);
  });

  it('tunnels https requests to remote hosts through HTTPS_PROXY', async () => {
    const target = await https();
    const proxy = await proxyServer(target.port);
    const dispatcher = new RoutingDispatcher({ env: { HTTPS_PROXY: proxy.url }, connect: connectOptions });
    await expect(get(dispatcher, remoteUrl('api', target.port, '/x'))).resolves.toBe('secure');
    expect(proxy.tunnels).toEqual([`api.example.test:${target.port}`]);
    expect(target.requests[0].headers.host).toBe(`api.example.test:${target.port}`);
  });

  it('uses HTTP_PROXY for https when HTTPS_PROXY is unset', async () => {
    const target = await https();
    const proxy = await proxyServer(target.port);
    const dispatcher = new RoutingDispatcher({ env: { http_proxy: proxy.url }, connect: connectOptions });
    await expect(get(dispatcher, remoteUrl('api', target.port))).resolves.toBe('secure');
    expect(proxy.tunnels).toHaveLength(1);
  });

  it('honours NO_PROXY', async () => {
    const target = await https();
    const proxy = await proxyServer(target.port);
    const dispatcher = new RoutingDispatcher({
      env: { HTTPS_PROXY: proxy.url, NO_PROXY: 'api.example.test' },
      connect: connectOptions,
    });
    await expect(get(dispatcher, remoteUrl('api', target.port))).resolves.toBe('secure');
    expect(proxy.tunnels).toEqual([]);
  });

  it('never sends loopback targets through the proxy', async () => {
    const local = await startServer((_req, res) => json(res, 'local'));
    onTestFinished(() => local.close());
    const proxy = await proxyServer(local.port);
    const dispatcher = new RoutingDispatcher({ env: { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url } });
    await expect(get(dispatcher, `${local.url}/x`)).resolves.toBe('local');
    expect(proxy.tunnels).toEqual([]);
    expect(proxy.plain).toEqual([]);
    expect(local.requests).toHaveLength(1);
  });
});

describe('extra CA certificates', () => {
  const env = (extra: Record<string, string>) => {
    const { NODE_EXTRA_CA_CERTS: _drop, ...rest } = process.env;
    return { ...rest, ...extra };
  };

  it('trusts a certificate from NODE_EXTRA_CA_CERTS and rejects it otherwise', async () => {
    const server = await https();
    const url = `${server.url}/`;
    const [trusted, untrusted] = await Promise.all([
      run(process.execPath, [fixture, url], {
        env: env({ NODE_EXTRA_CA_CERTS: TEST_CERT_PATH }),
        timeout: 15_000,
      }),
      run(process.execPath, [fixture, url], { env: env({}), timeout: 15_000 }),
    ]);
    expect(trusted.stdout.trim()).toBe('status 200');
    expect(untrusted.stdout.trim()).toMatch(/^error (SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY)/);
  });
});
