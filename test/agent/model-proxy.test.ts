/**
 * Model requests go through the library's HTTP exchange on the model's own proxy-aware pool, like the transports:
 * HTTPS_PROXY for remote hosts (a local CONNECT proxy; the model host never resolves), loopback directly, and the
 * URL policy (plain http only to loopback) before anything is sent.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openAIChatModel, runAgent, userMessage } from '../../src/agent/index.js';
import { createHttpDispatcher } from '../../src/internal-http.js';
import { TEST_CERT_PATH, json, startHttpsServer, startServer, type TestServer } from '../fixtures/http/server.js';
import { openAIText, startLlmServer, type LlmServer } from './helpers/llm-server.js';
import { weatherClient, type WeatherClient } from './helpers/weather-client.js';

const KEY = 'k-0123456789';
let llm: LlmServer | undefined;
let tls: TestServer | undefined;
let weather: WeatherClient | undefined;
const saved = {
  HTTP_PROXY: process.env.HTTP_PROXY,
  HTTPS_PROXY: process.env.HTTPS_PROXY,
  NO_PROXY: process.env.NO_PROXY,
  http_proxy: process.env.http_proxy,
  https_proxy: process.env.https_proxy,
  no_proxy: process.env.no_proxy,
};
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  for (const c of cleanups.splice(0)) await c();
  await llm?.close();
  await tls?.close();
  await weather?.client.close();
  llm = tls = weather = undefined;
});

/** A CONNECT proxy that tunnels every target to `port` on 127.0.0.1, recording the targets asked for. */
async function startConnectProxy(port: number): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const proxy = createServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  proxy.on('connect', (req, socket) => {
    seen.push(req.url ?? '');
    const up = connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, seen };
}

function useProxy(url: string): void {
  for (const k of ['http_proxy', 'https_proxy', 'no_proxy', 'NO_PROXY']) delete process.env[k];
  process.env.HTTPS_PROXY = url;
  process.env.HTTP_PROXY = url;
}

describe('model requests through a proxy', () => {
  it('reach a remote https host through HTTPS_PROXY (CONNECT), with the model key only inside the tunnel', async () => {
    tls = await startHttpsServer((_req, res) => json(res, (openAIText('via proxy') as { json: unknown }).json));
    weather = await weatherClient();
    const proxy = await startConnectProxy(tls.port);
    useProxy(proxy.url);
    // A pool like the model's own, trusting the test CA (the replica's certificate names localhost).
    const dispatcher = createHttpDispatcher({ connect: { ca: readFileSync(TEST_CERT_PATH), servername: 'localhost' } });
    cleanups.push(() => dispatcher.destroy());
    const model = openAIChatModel({
      baseUrl: 'https://llm.example.test/v1',
      apiKey: KEY,
      model: 'm',
      maxRetries: 0,
      dispatcher,
    });
    const result = await runAgent({ client: weather.client, model, messages: [userMessage('hi')] });
    expect(result.text).toBe('via proxy');
    expect(proxy.seen).toEqual(['llm.example.test:443']);
    expect(tls.requests[0].url).toBe('/v1/chat/completions');
    expect(tls.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("a model's own pool reads HTTPS_PROXY too, and loopback goes direct", async () => {
    tls = await startHttpsServer((_req, res) => json(res, {}));
    llm = await startLlmServer([openAIText('direct')]);
    weather = await weatherClient();
    const proxy = await startConnectProxy(tls.port);
    useProxy(proxy.url);
    const remote = openAIChatModel({ baseUrl: 'https://llm.example.test/v1', apiKey: KEY, model: 'm', maxRetries: 0 });
    cleanups.push(() => remote.close?.());
    // The tunnel is opened through the proxy; the replica's self-signed certificate is then refused.
    const error = await runAgent({ client: weather.client, model: remote, messages: [userMessage('hi')] }).catch(
      (e: unknown) => e,
    );
    expect(proxy.seen).toEqual(['llm.example.test:443']);
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(KEY);
    expect(tls.requests).toHaveLength(0);

    const local = openAIChatModel({ baseUrl: `${llm.url}/v1`, apiKey: KEY, model: 'm', maxRetries: 0 });
    cleanups.push(() => local.close?.());
    expect((await runAgent({ client: weather.client, model: local, messages: [userMessage('hi')] })).text).toBe(
      'direct',
    );
    expect(proxy.seen).toHaveLength(1);
    expect(llm.requests).toHaveLength(1);
  });

  it('refuses plain http to a remote host before sending the key (loopback http is allowed)', async () => {
    weather = await weatherClient();
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(502);
      res.end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    useProxy(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    const model = openAIChatModel({ baseUrl: 'http://llm.example.test/v1', apiKey: KEY, model: 'm', maxRetries: 0 });
    const error = await runAgent({ client: weather.client, model, messages: [userMessage('hi')] }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'URL_POLICY' });
    expect((error as Error).message).toContain('openai model API URL');
    expect((error as Error).message).not.toContain(KEY);
    expect(seen).toHaveLength(0);
    await model.close?.();
  });

  it('each model keeps its own keep-alive pool, ended by close()', async () => {
    delete process.env.HTTPS_PROXY;
    delete process.env.HTTP_PROXY;
    const server = await startServer((_req, res) => json(res, (openAIText('ok') as { json: unknown }).json));
    cleanups.push(() => server.close());
    weather = await weatherClient();
    const a = openAIChatModel({ baseUrl: `${server.url}/v1`, model: 'm', maxRetries: 0 });
    const b = openAIChatModel({ baseUrl: `${server.url}/v1`, model: 'm', maxRetries: 0 });
    for (const model of [a, b, a, b]) await runAgent({ client: weather.client, model, messages: [userMessage('hi')] });
    // Two models, two pools: one kept-alive connection each, reused by the second request of each.
    expect(server.requests).toHaveLength(4);
    expect(server.openSockets.size).toBe(2);
    await a.close?.();
    await b.close?.();
    await server.allSocketsClosed();
    expect(server.openSockets.size).toBe(0);
  });
});
