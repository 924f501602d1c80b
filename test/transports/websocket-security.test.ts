import { once } from 'node:events';
import { createServer } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Auth } from '../../src/core/types.js';
import type { WebSocketCallTemplate } from '../../src/index.js';
import { createWebSocketTransport } from '../../src/transports/websocket/index.js';
import { handshakeRequest } from '../../src/transports/websocket/handshake-request.js';
import { createTestContext } from '../helpers/context.js';
import { callOptions, toolOf } from '../fixtures/sockets/call-helpers.js';
import { answerEach, startWsServer } from '../fixtures/sockets/ws-server.js';

const ACCEPTED = ['wss://api.example.com/socket', 'ws://localhost/socket', 'ws://127.0.0.1:9090', 'ws://[::1]:9090'];
const REJECTED = [
  'ws://169.254.169.254',
  'ws://internal.service.local',
  'ws://10.0.0.5',
  'ws://example.com',
  'ws://localhost.evil.com',
  'ws://127.0.0.1.attacker.example',
  'http://localhost/socket',
  'https://example.com',
  '',
  'not-a-url',
  'javascript:alert(1)',
  'ws://0.0.0.0',
  'wss://u:p@example.com/socket',
];

function transportUnderTest() {
  const ctx = createTestContext();
  const transport = createWebSocketTransport(ctx);
  onTestFinished(async () => {
    await transport.close();
    await ctx.disposeShared();
  });
  return { ctx, transport };
}

async function echoServer() {
  const server = await startWsServer((peer) => answerEach(peer, (m) => m));
  onTestFinished(() => server.close());
  return server;
}

describe('websocket URL policy', () => {
  it.each(ACCEPTED)('accepts %s at connect', async (url) => {
    const request = await handshakeRequest(url, {}, null, {}, createTestContext(), new AbortController().signal);
    expect(new URL(request.url).host).toBe(new URL(url).host);
  });

  it.each(REJECTED)('rejects %j for calls and discovery before any I/O, naming the WebSocket URL', async (url) => {
    const { transport } = transportUnderTest();
    const template = { call_template_type: 'websocket', url, timeout: 1 } as WebSocketCallTemplate;
    const expected = { name: 'UrlPolicyError', code: 'URL_POLICY', message: expect.stringContaining('WebSocket URL') };
    await expect(transport.callTool(toolOf('x', template), {}, template, callOptions(template))).rejects.toMatchObject(
      expected,
    );
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject(expected);
    await expect(
      handshakeRequest(url, {}, null, {}, createTestContext(), new AbortController().signal),
    ).rejects.toMatchObject(expected);
  });

  it('never puts credentials or the query string into the policy error', async () => {
    const { transport } = transportUnderTest();
    const template = {
      call_template_type: 'websocket',
      url: 'ws://10.0.0.5/s?token=hunter2',
      timeout: 1,
    } as WebSocketCallTemplate;
    const error = await transport
      .callTool(toolOf('x', template), {}, template, callOptions(template))
      .catch((e: Error) => e);
    expect(String((error as Error).message)).not.toContain('hunter2');
  });

  it.each(['http://169.254.169.254/oauth/token', 'http://attacker.example/token'])(
    'rejects the OAuth2 token URL %s before connecting',
    async (tokenUrl) => {
      const server = await echoServer();
      const { transport } = transportUnderTest();
      const auth: Auth = { auth_type: 'oauth2', token_url: tokenUrl, client_id: 'id', client_secret: 'sec' };
      const template: WebSocketCallTemplate = {
        call_template_type: 'websocket',
        url: `${server.url}/ws`,
        auth,
        timeout: 2,
      };
      await expect(
        transport.callTool(toolOf('x', template), {}, template, callOptions(template)),
      ).rejects.toMatchObject({
        code: 'URL_POLICY',
        message: expect.stringContaining('OAuth2 token URL'),
      });
      expect(server.peers).toHaveLength(0);
    },
  );
});

describe('websocket handshake headers and auth', () => {
  async function upgradeHeaders(extra: Partial<WebSocketCallTemplate>, args: Record<string, unknown> = {}) {
    const server = await echoServer();
    const { transport } = transportUnderTest();
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws?x=1`,
      timeout: 2,
      ...extra,
    };
    await transport.callTool(toolOf('x', template), args, template, callOptions(template));
    return server.peers[0].request;
  }

  it('sends static headers and an api_key header', async () => {
    const req = await upgradeHeaders({
      headers: { 'X-Trace-Id': 't1' },
      auth: { auth_type: 'api_key', api_key: 'k1', var_name: 'X-Api-Key' },
    });
    expect(req.headers['x-trace-id']).toBe('t1');
    expect(req.headers['x-api-key']).toBe('k1');
  });

  it('appends an api_key query parameter to the URL', async () => {
    const req = await upgradeHeaders({
      auth: { auth_type: 'api_key', api_key: 'k 2', var_name: 'key', location: 'query' },
    });
    expect(req.url).toBe('/ws?x=1&key=k+2');
  });

  it('sends an api_key cookie merged with a static Cookie header', async () => {
    const req = await upgradeHeaders({
      headers: { Cookie: 'a=b' },
      auth: { auth_type: 'api_key', api_key: 'k3', var_name: 'session', location: 'cookie' },
    });
    expect(req.headers.cookie).toBe('a=b; session=k3');
  });

  it('sends basic and oauth2_user credentials as Authorization', async () => {
    const basic = await upgradeHeaders({ auth: { auth_type: 'basic', username: 'u', password: 'p' } });
    expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    const user = await upgradeHeaders({ auth: { auth_type: 'oauth2_user', access_token: 'at' } });
    expect(user.headers.authorization).toBe('Bearer at');
  });

  it('fetches an OAuth2 client-credentials token and sends it as Bearer', async () => {
    const tokenRequests: string[] = [];
    const tokenServer = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        tokenRequests.push(body);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'tok-1', token_type: 'bearer', expires_in: 3600 }));
      });
    });
    tokenServer.listen(0, '127.0.0.1');
    await once(tokenServer, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => tokenServer.close(() => resolve())));
    const port = (tokenServer.address() as { port: number }).port;
    const req = await upgradeHeaders({
      auth: { auth_type: 'oauth2', token_url: `http://127.0.0.1:${port}/token`, client_id: 'cid', client_secret: 'cs' },
    });
    expect(req.headers.authorization).toBe('Bearer tok-1');
    expect(tokenRequests).toHaveLength(1);
  });

  it('fetches a new OAuth2 token after the upgrade is refused with 401', async () => {
    let issued = 0;
    const tokenServer = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        issued++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: `tok-${issued}`, expires_in: 3600 }));
      });
    });
    tokenServer.listen(0, '127.0.0.1');
    await once(tokenServer, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => tokenServer.close(() => resolve())));
    const server = await startWsServer((peer) => answerEach(peer, () => '"ok"'), {
      intercept: (req, _res, socket) => {
        if (!socket || req.headers.authorization !== 'Bearer tok-1') return false;
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return true;
      },
    });
    onTestFinished(() => server.close());
    const { transport } = transportUnderTest();
    const port = (tokenServer.address() as { port: number }).port;
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      auth: { auth_type: 'oauth2', token_url: `http://127.0.0.1:${port}/token`, client_id: 'cid', client_secret: 'cs' },
    };
    const call = () => transport.callTool(toolOf('x', template), {}, template, callOptions(template));
    await expect(call()).rejects.toMatchObject({ name: 'HttpStatusError', status: 401 });
    expect(await call()).toBe('ok');
    expect(server.peers[0].request.headers.authorization).toBe('Bearer tok-2');
  });

  it('rejects CR/LF in a static header before connecting', async () => {
    const server = await echoServer();
    const { transport } = transportUnderTest();
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      headers: { 'X-Foo': 'a\r\nX-Injected: yes' },
    };
    await expect(transport.callTool(toolOf('x', template), {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'HEADER_INJECTION',
      message: expect.stringContaining('CR/LF'),
    });
    expect(server.peers).toHaveLength(0);
  });

  it('rejects CR/LF in a header_fields argument value before connecting, without echoing the value', async () => {
    const server = await echoServer();
    const { transport } = transportUnderTest();
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      header_fields: ['x-user'],
    };
    const error = await transport
      .callTool(toolOf('x', template), { 'x-user': 'bob\r\nX-Admin: true' }, template, callOptions(template))
      .catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'HEADER_INJECTION', message: expect.stringContaining('x-user') });
    expect((error as Error).message).not.toContain('X-Admin');
    expect(server.peers).toHaveLength(0);
  });

  it('keeps an api_key query value out of the error of a refused upgrade', async () => {
    const server = await startWsServer(() => {}, {
      intercept: (_req, _res, socket) => {
        if (!socket) return false;
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return true;
      },
    });
    onTestFinished(() => server.close());
    const { transport } = transportUnderTest();
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      auth: { auth_type: 'api_key', api_key: 'supersecret', var_name: 'k', location: 'query' },
    };
    const error = await transport
      .callTool(toolOf('x', template), {}, template, callOptions(template))
      .catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'HttpStatusError', status: 403 });
    expect((error as Error).message).not.toContain('supersecret');
  });
});
