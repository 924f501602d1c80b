import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { GraphqlError } from '../../src/transports/graphql/index.js';
import { graphqlServer } from './graphql-helpers.js';

async function clientFor(url: string, extra: Record<string, unknown> = {}) {
  const client = await UtcpClient.create({ variables: { api_TOKEN: 'very-secret-token' } });
  onTestFinished(() => client.close());
  const result = await client.registerManual({
    name: 'api',
    call_template_type: 'graphql',
    url,
    headers: { Authorization: 'Bearer ${TOKEN}' },
    ...extra,
  });
  return { client, result };
}

describe('graphql through UtcpClient', () => {
  it('registers a schema and calls a query with validated arguments', async () => {
    const server = await graphqlServer();
    const { client, result } = await clientFor(server.url);
    expect(result.success).toBe(true);
    expect(result.manual.tools.map((t) => t.name)).toContain('api.user');
    await expect(client.callTool('api.user', { id: '1' })).resolves.toMatchObject({
      id: '1',
      name: 'Ada',
      address: { city: 'London' },
    });
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer very-secret-token');
  });

  it('never stores the substituted secret', async () => {
    const server = await graphqlServer();
    const { client, result } = await clientFor(server.url);
    expect(JSON.stringify(result)).not.toContain('very-secret-token');
    expect(JSON.stringify(await client.getTools())).not.toContain('very-secret-token');
  });

  it('rejects arguments that miss a required GraphQL argument before sending', async () => {
    const server = await graphqlServer();
    const { client } = await clientFor(server.url);
    const before = server.requests.length;
    await expect(client.callTool('api.user', {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(server.requests.length).toBe(before);
  });

  it('runs a mutation', async () => {
    const server = await graphqlServer();
    const { client } = await clientFor(server.url);
    await expect(client.callTool('api.createUser', { input: { name: 'Dee', role: 'ADMIN' } })).resolves.toMatchObject({
      name: 'Dee',
      role: 'ADMIN',
    });
    expect(server.requests.at(-1)?.query.startsWith('mutation ')).toBe(true);
  });

  it('surfaces GraphQL errors as GraphqlError', async () => {
    const server = await graphqlServer();
    const { client } = await clientFor(server.url);
    await expect(client.callTool('api.failing', {})).rejects.toBeInstanceOf(GraphqlError);
  });

  it('streams a subscription', async () => {
    const server = await graphqlServer();
    const { client } = await clientFor(server.url);
    const items: unknown[] = [];
    for await (const item of client.callToolStreaming('api.countdown', { from: 2 })) items.push(item);
    expect(items).toEqual([2, 1, 0]);
    // No configuration: the stock graphql-yoga server is reached over GraphQL over SSE, with the auth header.
    const sse = server.httpHits.filter((h) => String(h.headers.accept).startsWith('text/event-stream'));
    expect(sse).toHaveLength(1);
    expect(sse[0].headers.authorization).toBe('Bearer very-secret-token');
    expect(server.upgrades).toHaveLength(0);
  });

  it('fails registration for a remote plain-http URL without contacting it', async () => {
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    const result = await client.registerManual({
      name: 'bad',
      call_template_type: 'graphql',
      url: 'http://10.0.0.5/graphql',
    });
    expect(result.success).toBe(false);
    expect(result.errors.join(' ')).toContain('GraphQL manual discovery');
  });

  it('applies the caller timeout to a call', async () => {
    const server = await graphqlServer();
    const { client } = await clientFor(server.url);
    await expect(client.callTool('api.slow', {}, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
});
