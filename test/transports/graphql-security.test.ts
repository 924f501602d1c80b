import { describe, expect, it } from 'vitest';
import { UrlPolicyError } from '../../src/core/errors.js';
import type { Tool } from '../../src/core/types.js';
import type { GraphqlCallTemplate } from '../../src/index.js';
import { MANUAL, callOptions, discover, graphqlServer, graphqlTransport, template } from './graphql-helpers.js';

const REJECTED = [
  'http://localhost.evil.com/graphql',
  'http://127.0.0.1.attacker.example/graphql',
  'http://169.254.169.254/graphql',
  'http://10.0.0.5/graphql',
  'http://internal.service.local/graphql',
  'http://example.com/graphql',
  'http://0.0.0.0/graphql',
  'https://user:pass@example.com/graphql',
  'ftp://example.com/graphql',
  'not-a-url',
];

function toolFor(raw: GraphqlCallTemplate, name = 'hello'): Tool {
  return { name: `${MANUAL}.${name}`, description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: raw };
}

/** A token endpoint on the real server: any hit proves the transport did I/O before the URL check. */
async function tokenTrap() {
  const server = await graphqlServer();
  let hits = 0;
  server.route('/token', (req, res) => {
    hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: 't' }));
  });
  const auth = {
    auth_type: 'oauth2' as const,
    token_url: `${server.origin}/token`,
    client_id: 'c',
    client_secret: 's',
  };
  return { auth, hits: () => hits, server };
}

describe('graphql URL policy', () => {
  it.each(REJECTED)('rejects registration at %s before any I/O', async (url) => {
    const trap = await tokenTrap();
    const { transport } = graphqlTransport();
    const raw = template(url, { auth: trap.auth });
    const error = await transport.registerManual(raw, callOptions(raw)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UrlPolicyError);
    expect((error as Error).message).toContain('GraphQL manual discovery');
    expect((error as Error).message).toContain('HTTPS or be a literal loopback address');
    expect(trap.hits()).toBe(0);
  });

  it.each(REJECTED)('rejects a call to %s before any I/O', async (url) => {
    const trap = await tokenTrap();
    const { transport } = graphqlTransport();
    const raw = template(url, { auth: trap.auth, query: 'query { hello }' });
    const error = await transport.callTool(toolFor(raw), {}, raw, callOptions(raw)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UrlPolicyError);
    expect((error as Error).message).toContain('GraphQL tool invocation');
    expect(trap.hits()).toBe(0);
  });

  it('keeps credentials and query strings out of the policy message', async () => {
    const { transport } = graphqlTransport();
    const raw = template('http://10.0.0.5/graphql?api_key=topsecret');
    const error = (await transport.registerManual(raw, callOptions(raw)).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('http://10.0.0.5/graphql');
    expect(error.message).not.toContain('topsecret');
  });

  it('checks the URL again at call time even when discovery used another URL', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url);
    const found = await discover(transport, raw);
    const hello = found.tool('hello');
    const moved = { ...(hello.tool_call_template as GraphqlCallTemplate), url: 'http://10.0.0.5/graphql' };
    await expect(transport.callTool(hello, {}, moved, callOptions(raw))).rejects.toBeInstanceOf(UrlPolicyError);
  });

  it('accepts a literal loopback address on plain http', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(`http://127.0.0.1:${server.port}/graphql`);
    await expect(transport.registerManual(raw, callOptions(raw))).resolves.toBeDefined();
  });

  it('rejects an OAuth2 token URL on a metadata address before sending credentials', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, {
      auth: { auth_type: 'oauth2', token_url: 'http://169.254.169.254/token', client_id: 'c', client_secret: 's' },
    });
    const error = (await transport.registerManual(raw, callOptions(raw)).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UrlPolicyError);
    expect(error.message).toContain('OAuth2 token URL');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a plain-ws subscription URL to a remote host before connecting', async () => {
    const { transport } = graphqlTransport();
    const raw = template('https://api.example.com/graphql', {
      subscription_url: 'ws://10.0.0.5/graphql',
      operation_type: 'subscription',
      query: 'subscription { ticks }',
    });
    const error = (await transport
      .callTool(toolFor(raw, 'ticks'), {}, raw, callOptions(raw))
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UrlPolicyError);
    expect(error.message).toContain('WebSocket URL');
  });

  it('derives ws:// from a plain-http remote url and rejects it', async () => {
    const { transport } = graphqlTransport();
    const raw = template('http://example.com/graphql', {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
      subscription_transport: 'websocket',
    });
    await expect(transport.callTool(toolFor(raw, 'ticks'), {}, raw, callOptions(raw))).rejects.toThrow(
      /WebSocket URL.*ws:\/\/example\.com\/graphql/,
    );
  });

  it('rejects a plain-http remote url for an HTTP subscription (auto mode) without contacting it', async () => {
    const { transport } = graphqlTransport();
    const raw = template('http://example.com/graphql', {
      operation_type: 'subscription',
      query: 'subscription { ticks }',
    });
    await expect(transport.callTool(toolFor(raw, 'ticks'), {}, raw, callOptions(raw))).rejects.toThrow(
      /GraphQL subscription.*http:\/\/example\.com\/graphql/,
    );
  });
});

describe('graphql header checks', () => {
  it.each(['acme\r\nX-Injected: yes', 'acme\nX-Other: bar', 'acme\rX-Other: bar'])(
    'rejects a header_fields value with CR/LF (%j) without sending',
    async (value) => {
      const server = await graphqlServer();
      const { transport } = graphqlTransport();
      const raw = template(server.url, { header_fields: ['X-Tenant'], query: 'query { hello }' });
      const error = (await transport
        .callTool(toolFor(raw), { 'X-Tenant': value }, raw, callOptions(raw))
        .catch((e: unknown) => e)) as Error;
      expect(error).toMatchObject({ code: 'HEADER_INJECTION' });
      expect(error.message).toContain('CR/LF');
      expect(error.message).toContain('X-Tenant');
      expect(error.message).not.toContain('X-Injected');
      expect(server.httpHits).toHaveLength(0);
    },
  );

  it('rejects an api_key var_name with CR/LF without sending', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, {
      auth: { auth_type: 'api_key', api_key: 'k', var_name: 'X-Api-Key\r\nX-Injected: yes', location: 'header' },
    });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
    expect(server.httpHits).toHaveLength(0);
  });

  it('rejects a static header value with CR/LF without sending', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, { headers: { 'X-Static': 'a\r\nb: c' } });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
    expect(server.httpHits).toHaveLength(0);
  });
});
