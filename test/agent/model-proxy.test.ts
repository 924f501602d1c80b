/** Model requests honour HTTPS_PROXY / HTTP_PROXY like the transports (a local proxy; the model host never resolves). */
import { createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openAIChatModel, runAgent, userMessage } from '../../src/agent/index.js';
import { openAIText, startLlmServer, type LlmServer } from './helpers/llm-server.js';
import { weatherClient, type WeatherClient } from './helpers/weather-client.js';

let llm: LlmServer | undefined;
let weather: WeatherClient | undefined;
const saved = {
  HTTP_PROXY: process.env.HTTP_PROXY,
  HTTPS_PROXY: process.env.HTTPS_PROXY,
  NO_PROXY: process.env.NO_PROXY,
};
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  cleanups.splice(0).forEach((c) => c());
  await llm?.close();
  await weather?.client.close();
});

/** A forward proxy that sends every request (absolute-form or CONNECT) to the local replica, recording the target. */
async function startProxy(target: URL): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const proxy = createServer((req, res) => {
    seen.push(req.url ?? '');
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: new URL(req.url!).pathname,
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  proxy.on('connect', (req, socket) => {
    seen.push(`CONNECT ${req.url}`);
    const up = connect(Number(target.port), target.hostname, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.pipe(socket);
      socket.pipe(up);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    proxy.closeAllConnections();
    proxy.close();
  });
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, seen };
}

describe('model requests through a proxy', () => {
  it('go through HTTP_PROXY for a remote host, and directly to loopback', async () => {
    llm = await startLlmServer([openAIText('via proxy'), openAIText('direct')]);
    weather = await weatherClient();
    const proxy = await startProxy(new URL(llm.url));
    process.env.HTTP_PROXY = proxy.url;
    delete process.env.NO_PROXY;
    const remote = openAIChatModel({
      baseUrl: 'http://llm.example.test/v1',
      apiKey: 'k-0123456789',
      model: 'm',
      maxRetries: 0,
    });
    expect((await runAgent({ client: weather.client, model: remote, messages: [userMessage('hi')] })).text).toBe(
      'via proxy',
    );
    expect(proxy.seen.join(' ')).toContain('llm.example.test');

    const local = openAIChatModel({ baseUrl: `${llm.url}/v1`, apiKey: 'k-0123456789', model: 'm', maxRetries: 0 });
    expect((await runAgent({ client: weather.client, model: local, messages: [userMessage('hi')] })).text).toBe(
      'direct',
    );
    expect(proxy.seen).toHaveLength(1);
  });
});
