import { afterEach, describe, expect, it } from 'vitest';
import { UrlPolicyError } from '../../src/core/errors.js';
import { createHarness, mcpTemplate, toolNames, type Harness } from '../fixtures/mcp/harness.js';
import { startHttpMcpServer, startSseMcpServer, type HttpMcpFixture } from '../fixtures/mcp/http-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function harness(): Harness {
  const h = createHarness();
  cleanups.push(h.close);
  return h;
}

async function httpServer(options?: Parameters<typeof startHttpMcpServer>[0]): Promise<HttpMcpFixture> {
  const s = await startHttpMcpServer(options);
  cleanups.unshift(s.close);
  return s;
}

async function sseServer(): Promise<HttpMcpFixture> {
  const s = await startSseMcpServer();
  cleanups.unshift(s.close);
  return s;
}

describe('mcp over streamable HTTP (fixture server)', () => {
  it('discovers and calls tools over one session', async () => {
    const server = await httpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url } });
    expect(toolNames(await h.register(t))).toContain('web.echo');
    expect(await h.call(t, 'web.echo', { text: 'over http' })).toBe('over http');
    expect(await h.call(t, 'web.whoami')).toMatchObject({ label: 'http' });
    expect(server.initializations).toBe(1);
    expect(server.requests.filter((r) => r.rpc === 'initialize')).toHaveLength(1);
  });

  it('falls back to initialize when the server/discover probe gets HTTP 500, as the SDK clients do', async () => {
    const s = await httpServer({ discoverStatus: 500 });
    const h = harness();
    const t = mcpTemplate('m', { srv: { url: s.url } });
    expect(toolNames(await h.register(t))).toContain('srv.echo');
    expect(await h.call(t, 'srv.echo', { text: 'hi' })).toBe('hi');
    expect(s.requests.map((r) => r.rpc).filter(Boolean)).toEqual(
      expect.arrayContaining(['server/discover', 'initialize', 'tools/list', 'tools/call']),
    );
    expect(h.transport.sessionInfo().find((i) => i.manual === 'm')?.protocolVersion).not.toBe('2026-07-28');
  });

  it('sends the configured headers', async () => {
    const server = await httpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url, headers: { 'X-Trace-Id': 'trace-123' } } });
    await h.call(t, 'web.echo', { text: 'x' });
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((r) => r.headers['x-trace-id'] === 'trace-123')).toBe(true);
  });

  it('re-initialises an expired session (404) and retries the call once', async () => {
    const server = await httpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url } });
    await h.call(t, 'web.echo', { text: 'first' });
    const oldSession = server.requests.find((r) => r.sessionId)!.sessionId;
    await server.expireSessions();
    expect(await h.call(t, 'web.echo', { text: 'second' })).toBe('second');
    expect(server.initializations).toBe(2);
    const toolCalls = server.requests.filter((r) => r.rpc === 'tools/call');
    expect(toolCalls.map((r) => r.sessionId === oldSession)).toEqual([true, true, false]);
  });

  it('ends the HTTP session on close (DELETE) and leaves none open', async () => {
    const server = await httpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url } });
    await h.call(t, 'web.echo', { text: 'x' });
    expect(server.liveSessions).toBe(1);
    await h.transport.close();
    expect(server.requests.some((r) => r.method === 'DELETE')).toBe(true);
    expect(server.liveSessions).toBe(0);
  });

  it('cancels a running call over HTTP and the server sees the cancellation', async () => {
    const server = await httpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url } });
    const controller = new AbortController();
    const call = h.call(t, 'web.wait', {}, { signal: controller.signal, onProgress: () => controller.abort() });
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await h.call(t, 'web.cancellations')).toBe(1);
  });

  it('sends an OAuth2 client-credentials token and fetches a new one after a 401', async () => {
    const server = await httpServer({ requireIssuedToken: true });
    const h = harness();
    const t = mcpTemplate(
      'm',
      { web: { url: server.url } },
      {
        auth: { auth_type: 'oauth2', token_url: `${server.origin}/token`, client_id: 'id', client_secret: 'secret' },
      },
    );
    expect(await h.call(t, 'web.echo', { text: 'a' })).toBe('a');
    expect(server.requests.filter((r) => r.path === '/mcp').every((r) => r.authorization === 'Bearer tok-1')).toBe(
      true,
    );
    server.revokeToken('tok-1');
    expect(await h.call(t, 'web.echo', { text: 'b' })).toBe('b');
    expect(server.issuedTokens).toEqual(['tok-1', 'tok-2']);
    const last = server.requests.filter((r) => r.rpc === 'tools/call').at(-1)!;
    expect(last.authorization).toBe('Bearer tok-2');
  });

  it('sends oauth2_user and api_key credentials as headers', async () => {
    const server = await httpServer();
    const h = harness();
    const user = mcpTemplate(
      'u',
      { web: { url: server.url } },
      { auth: { auth_type: 'oauth2_user', access_token: 'user-token' } },
    );
    const key = mcpTemplate(
      'k',
      { web: { url: server.url } },
      { auth: { auth_type: 'api_key', api_key: 'k-123', var_name: 'X-Api-Key' } },
    );
    await h.call(user, 'web.echo', { text: 'x' });
    await h.call(key, 'web.echo', { text: 'y' });
    const calls = server.requests.filter((r) => r.rpc === 'tools/call');
    expect(calls[0].authorization).toBe('Bearer user-token');
    expect(calls[1].headers['x-api-key']).toBe('k-123');
  });

  it('reports a server that went away, after one reconnect attempt', async () => {
    const server = await startHttpMcpServer();
    const h = harness();
    const t = mcpTemplate('m', { web: { url: server.url } });
    await h.call(t, 'web.echo', { text: 'x' });
    await server.close();
    const error = await h.call(t, 'web.echo', { text: 'y' }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /MCP server 'web' at http:\/\/127\.0\.0\.1:\d+\/mcp could not be initialised: .*ECONNREFUSED/,
    );
  });

  it('rejects a plain-http non-loopback URL before any I/O', async () => {
    const h = harness();
    const error = await h
      .register(mcpTemplate('m', { remote: { url: 'http://10.0.0.5/mcp' } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UrlPolicyError);
    expect((error as Error).message).toContain('MCP server URL');
    expect(h.transport.sessionInfo()).toEqual([]);
  });

  it('reports an HTTP error status of an explicit streamable-http server without falling back', async () => {
    const server = await sseServer();
    const h = harness();
    const error = await h
      .register(mcpTemplate('m', { legacy: { url: server.url, transport: 'http' } }))
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /MCP server 'legacy' at http:\/\/127\.0\.0\.1:\d+\/sse could not be initialised: HTTP 405/,
    );
    expect(server.requests.some((r) => r.method === 'GET')).toBe(false);
  });
});

describe('mcp over the legacy HTTP+SSE transport (fixture server)', () => {
  it('falls back to SSE when streamable HTTP fails to initialise', async () => {
    const server = await sseServer();
    const h = harness();
    const t = mcpTemplate('m', { legacy: { url: server.url } });
    expect(toolNames(await h.register(t))).toContain('legacy.echo');
    expect(await h.call(t, 'legacy.whoami')).toMatchObject({ label: 'sse' });
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/sse' });
    expect(server.requests.filter((r) => r.method === 'GET' && r.path === '/sse')).toHaveLength(1);
  });

  it('uses SSE directly when transport is sse', async () => {
    const server = await sseServer();
    const h = harness();
    const t = mcpTemplate('m', { legacy: { url: server.url, transport: 'sse' } });
    expect(await h.call(t, 'legacy.echo', { text: 'sse' })).toBe('sse');
    expect(server.requests.some((r) => r.method === 'POST' && r.path === '/sse')).toBe(false);
  });

  it('re-opens an SSE session the server forgot', async () => {
    const server = await sseServer();
    const h = harness();
    const t = mcpTemplate('m', { legacy: { url: server.url, transport: 'sse' } });
    await h.call(t, 'legacy.echo', { text: 'one' });
    await server.expireSessions();
    expect(await h.call(t, 'legacy.echo', { text: 'two' })).toBe('two');
    expect(server.initializations).toBe(2);
  });
});
