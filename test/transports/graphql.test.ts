import { describe, expect, it } from 'vitest';
import { HttpStatusError, TransportError, UtcpAbortError, UtcpTimeoutError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { Tool } from '../../src/core/types.js';
import type { GraphqlCallTemplate } from '../../src/index.js';
import { GraphqlError } from '../../src/transports/graphql/index.js';
import { MANUAL, callOptions, discover, graphqlServer, graphqlTransport, template } from './graphql-helpers.js';

describe('graphql discovery', () => {
  it('turns every root field into a tool tagged with its operation', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tools } = await discover(transport, template(server.url));
    const summary = Object.fromEntries(
      tools.map((t) => [t.name, [t.tags, (t.tool_call_template as GraphqlCallTemplate).operation_type]]),
    );
    expect(summary).toMatchObject({
      hello: [['query'], 'query'],
      user: [['query'], 'query'],
      createUser: [['mutation'], 'mutation'],
      countdown: [['subscription'], 'subscription'],
    });
    expect(tools.find((t) => t.name === 'hello')?.description).toBe('Greets someone');
    expect(tools.find((t) => t.name === 'user')?.description).toBe('');
  });

  it('sends the introspection query as a POST the server answers', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    await discover(transport, template(server.url));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].operationName).toBe('UtcpIntrospection');
    expect(server.requests[0].query).toContain('__schema');
    expect(server.requests[0].headers['content-type']).toBe('application/json');
    expect(server.requests[0].headers.accept).toBe('application/graphql-response+json, application/json');
  });

  it('maps arguments to inputs: required non-null, defaults, enums, lists and input objects in $defs', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tool } = await discover(transport, template(server.url));
    expect(tool('user').inputs).toEqual({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] });
    expect(tool('hello').inputs).toEqual({
      type: 'object',
      properties: { name: { type: 'string', default: 'world' } },
    });
    const users = tool('users').inputs as any;
    expect(users.required).toBeUndefined();
    expect(users.properties.ids).toEqual({ type: 'array', items: { type: 'string' } });
    expect(users.properties.role).toEqual({ type: 'string', enum: ['ADMIN', 'MEMBER'], default: 'MEMBER' });
    expect(users.properties.filter).toEqual({ $ref: '#/$defs/UserFilter' });
    expect(users.$defs.UserFilter.properties.limit).toEqual({ type: 'integer', default: 10 });
    expect(users.$defs.UserFilter.properties.and).toMatchObject({ $ref: '#/$defs/UserFilter' });
    const create = tool('createUser').inputs as any;
    expect(create.required).toEqual(['input']);
    expect(create.$defs.CreateUserInput).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string' },
        role: { type: 'string', enum: ['ADMIN', 'MEMBER'], default: 'MEMBER' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['name'],
    });
  });

  it('maps custom scalars to an open schema naming the scalar', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tool } = await discover(transport, template(server.url));
    expect(tool('now').outputs).toEqual({ description: 'GraphQL scalar DateTime' });
  });

  it('generates documents with selection sets two levels deep, skipping fields with required arguments', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tool } = await discover(transport, template(server.url));
    expect((tool('user').tool_call_template as GraphqlCallTemplate).query).toBe(
      'query ($id: ID!) { user(id: $id) { id name age role address { street city } friends { id name age role } } }',
    );
    expect((tool('search').tool_call_template as GraphqlCallTemplate).query).toBe(
      'query ($term: String!) { search(term: $term) { __typename ... on User { id name age role address { street city } friends { id name age role } } ... on Post { id title } } }',
    );
    expect((tool('hello').tool_call_template as GraphqlCallTemplate).query).toBe(
      'query ($name: String) { hello(name: $name) }',
    );
    expect((tool('failing').tool_call_template as GraphqlCallTemplate).query).toBe('query { failing }');
    expect((tool('createUser').tool_call_template as GraphqlCallTemplate).query).toMatch(
      /^mutation \(\$input: CreateUserInput!\) \{ createUser\(input: \$input\) \{ id /,
    );
  });

  it('declares defaulted arguments nullable in variable_types', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tool } = await discover(transport, template(server.url));
    expect((tool('users').tool_call_template as GraphqlCallTemplate).variable_types).toEqual({
      filter: 'UserFilter',
      ids: '[ID!]',
      role: 'Role',
    });
    expect((tool('user').tool_call_template as GraphqlCallTemplate).variable_types).toEqual({ id: 'ID!' });
  });

  it('describes the selected output shape', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const { tool } = await discover(transport, template(server.url));
    const out = tool('users').outputs as any;
    expect(out.type).toBe('array');
    expect(Object.keys(out.items.properties)).toEqual(['id', 'name', 'age', 'role', 'address', 'friends']);
    expect(out.items.properties.address).toEqual({
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    });
  });

  it('copies the raw template into tools, never the substituted one', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, { headers: { 'X-Token': '${TOKEN}' } });
    const substituted = template(server.url, { headers: { 'X-Token': 's3cret-value' } });
    const { tools } = await discover(transport, raw, substituted);
    expect(server.requests[0].headers['x-token']).toBe('s3cret-value');
    expect(JSON.stringify(tools)).not.toContain('s3cret-value');
    expect((tools[0].tool_call_template as GraphqlCallTemplate).headers).toEqual({ 'X-Token': '${TOKEN}' });
  });

  it('keeps a query supplied in the manual template', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const custom = 'query Mine { hello }';
    const { tool } = await discover(transport, template(server.url, { query: custom }));
    expect((tool('user').tool_call_template as GraphqlCallTemplate).query).toBe(custom);
  });

  it('fails registration when introspection answers with errors', async () => {
    const server = await graphqlServer();
    server.route('/graphql', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: 'introspection is disabled' }] }));
    });
    const { transport } = graphqlTransport();
    const raw = template(server.url);
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toThrow(/introspection is disabled/);
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toBeInstanceOf(GraphqlError);
  });

  it('fails registration when the endpoint answers an HTTP error', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(`${server.origin}/missing`);
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toBeInstanceOf(HttpStatusError);
  });

  it('fails registration when data has no __schema', async () => {
    const server = await graphqlServer();
    server.route('/graphql', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: {} }));
    });
    const { transport } = graphqlTransport();
    const raw = template(server.url);
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'PROTOCOL_ERROR' });
  });

  it('fails registration when the introspection result exceeds the document limit', async () => {
    const server = await graphqlServer();
    const small = graphqlTransport({ limits: { ...DEFAULT_LIMITS, max_document_bytes: 1000 } });
    const raw = template(server.url);
    await expect(small.transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });
});

describe('graphql calls', () => {
  async function setup(extra: Partial<GraphqlCallTemplate> = {}) {
    const server = await graphqlServer();
    const { transport, ctx } = graphqlTransport();
    const raw = template(server.url, extra);
    const found = await discover(transport, raw);
    server.requests.length = 0;
    const call = (
      name: string,
      args: Record<string, unknown>,
      override: Partial<GraphqlCallTemplate> = {},
      signal?: AbortSignal,
    ) => {
      const tool = found.tool(name);
      return transport.callTool(
        tool,
        args,
        { ...(tool.tool_call_template as GraphqlCallTemplate), ...override },
        callOptions(raw, signal),
      );
    };
    return { server, transport, ctx, raw, call, tool: found.tool };
  }

  it('selects the members of unions and interfaces with inline fragments, aliasing fields whose types clash (docs/design/transports.md#graphql-abstract-types)', async () => {
    const { call, tool } = await setup();
    expect(await call('search', { term: 'x' })).toEqual([
      {
        __typename: 'User',
        id: '1',
        name: 'Ada',
        age: 36,
        role: 'ADMIN',
        address: expect.any(Object),
        friends: expect.any(Array),
      },
      { __typename: 'Post', id: 'p1', title: 'Hi' },
    ]);
    // Photo.size is an Int and Clip.size a String: one selection set cannot hold both, so each is aliased.
    expect((tool('media').tool_call_template as GraphqlCallTemplate).query).toBe(
      'query { media { __typename ... on Photo { id size_Photo: size caption } ... on Clip { id size_Clip: size seconds } } }',
    );
    expect(await call('media', {})).toEqual([
      { __typename: 'Photo', id: 'p1', size_Photo: 1024, caption: 'A lake' },
      { __typename: 'Clip', id: 'c1', size_Clip: 'large', seconds: 30 },
    ]);
    // An interface: its own fields once, then each implementation's.
    expect((tool('node').tool_call_template as GraphqlCallTemplate).query).toBe(
      'query ($id: ID!) { node(id: $id) { __typename id ... on Photo { size_Photo: size caption } ... on Clip { size_Clip: size seconds } } }',
    );
    expect(await call('node', { id: 'c1' })).toEqual({ __typename: 'Clip', id: 'c1', size_Clip: 'large', seconds: 30 });
    expect(tool('node').outputs).toMatchObject({
      anyOf: [
        { type: 'object', properties: { __typename: { const: 'Photo' }, id: { type: 'string' } } },
        { type: 'object', properties: { __typename: { const: 'Clip' }, seconds: { type: 'integer' } } },
      ],
    });
  });

  it('returns the field value of a generated document, with nested objects selected', async () => {
    const { call } = await setup();
    await expect(call('user', { id: '1' })).resolves.toEqual({
      id: '1',
      name: 'Ada',
      age: 36,
      role: 'ADMIN',
      address: { street: '1 Loop', city: 'London' },
      friends: [{ id: '2', name: 'Bob', age: null, role: 'MEMBER' }],
    });
  });

  it('sends input objects, enums and lists as variables', async () => {
    const { call, server } = await setup();
    const result = await call('users', { filter: { role: 'ADMIN', nameContains: 'A' }, ids: ['1', '2'] });
    expect(result).toEqual([expect.objectContaining({ id: '1', name: 'Ada' })]);
    expect(server.requests[0].variables).toEqual({ filter: { role: 'ADMIN', nameContains: 'A' }, ids: ['1', '2'] });
  });

  it('lets the server apply argument defaults when they are omitted', async () => {
    const { call, server } = await setup();
    await expect(call('hello', {})).resolves.toBe('Hello, world!');
    expect(server.requests[0].variables).toEqual({});
  });

  it('sends mutations as mutations', async () => {
    const { call, server } = await setup();
    const created = await call('createUser', { input: { name: 'Cy', tags: ['a'] } });
    expect(created).toMatchObject({ id: '3', name: 'Cy', role: 'MEMBER' });
    expect(server.requests[0].query.startsWith('mutation ')).toBe(true);
  });

  it('moves header_fields arguments into headers and out of the variables', async () => {
    const { call, server } = await setup({ header_fields: ['X-Tenant'] });
    await call('hello', { name: 'Zed', 'X-Tenant': 'acme' });
    expect(server.requests[0].headers['x-tenant']).toBe('acme');
    expect(server.requests[0].variables).toEqual({ name: 'Zed' });
  });

  it('sends static headers and operation_name', async () => {
    const { call, server } = await setup();
    await call(
      'hello',
      {},
      { headers: { 'X-Static': 'yes' }, query: 'query Named { hello }', operation_name: 'Named' },
    );
    expect(server.requests[0].headers['x-static']).toBe('yes');
    expect(server.requests[0].operationName).toBe('Named');
  });

  it('throws GraphqlError with the server messages', async () => {
    const { call } = await setup();
    const error = await call('failing', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphqlError);
    expect((error as GraphqlError).message).toContain('failing is broken on purpose');
    expect((error as GraphqlError).code).toBe('TOOL_ERROR');
  });

  it('attaches partial data to the error', async () => {
    const { call } = await setup();
    const error = (await call('partial', {}).catch((e: unknown) => e)) as GraphqlError;
    expect(error).toBeInstanceOf(GraphqlError);
    expect(error.message).toContain('second item failed');
    expect(error.data).toEqual({ partial: ['ok', null] });
  });

  it('returns the whole data object for a custom query', async () => {
    const { call } = await setup();
    await expect(
      call('hello', { n: 'Q' }, { query: 'query ($n: String) { a: hello(name: $n) b: hello }' }),
    ).resolves.toEqual({
      a: 'Hello, Q!',
      b: 'Hello, world!',
    });
  });

  it('builds a document with the selection set from the cached schema when a template has no query', async () => {
    const { call, server } = await setup();
    const result = await call('user', { id: '2' }, { query: null });
    expect(result).toMatchObject({ id: '2', name: 'Bob', friends: [{ id: '1' }] });
    expect(server.requests[0].query).toContain('user(id: $id) { id name');
  });

  it('generates a selection-less document from variable_types for foreign templates, unknown types as String', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const foreign = template(server.url, { variable_types: {} });
    const tool: Tool = {
      name: `${MANUAL}.hello`,
      description: '',
      inputs: {},
      outputs: {},
      tags: [],
      tool_call_template: foreign,
    };
    await expect(transport.callTool(tool, { name: 'Foreign' }, foreign, callOptions(foreign))).resolves.toBe(
      'Hello, Foreign!',
    );
    expect(server.requests[0].query).toBe('query ($name: String) { hello(name: $name) }');
  });

  it('streams a query as exactly one item', async () => {
    const { transport, tool, raw } = await setup();
    const t = tool('hello');
    const items: unknown[] = [];
    for await (const item of transport.callToolStream!(
      t,
      { name: 'S' },
      t.tool_call_template as GraphqlCallTemplate,
      callOptions(raw),
    ))
      items.push(item);
    expect(items).toEqual(['Hello, S!']);
  });

  it('rejects with TIMEOUT when the resolver never answers within the template timeout', async () => {
    const { call } = await setup();
    const error = await call('slow', {}, { timeout: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect((error as UtcpTimeoutError).timeoutMs).toBe(100);
  });

  it('rejects with TIMEOUT when the endpoint accepts the request and never responds', async () => {
    const { call, server } = await setup();
    let hit = false;
    server.route('/graphql', () => {
      hit = true;
    });
    await expect(call('hello', {}, { timeout: 100 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(hit).toBe(true);
  });

  it('rejects with ABORTED when the caller aborts', async () => {
    const { call } = await setup();
    const controller = new AbortController();
    const pending = call('slow', {}, {}, controller.signal);
    setImmediate(() => controller.abort());
    await expect(pending).rejects.toBeInstanceOf(UtcpAbortError);
  });

  it('rejects an in-flight call when the transport closes', async () => {
    const { call, transport, server } = await setup();
    const pending = call('slow', {});
    await new Promise<void>((resolve) => {
      const wait = () => (server.requests.length > 0 ? resolve() : setImmediate(wait));
      wait();
    });
    await transport.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it('stops reading at max_response_bytes', async () => {
    const server = await graphqlServer();
    const { transport } = graphqlTransport({ limits: { ...DEFAULT_LIMITS, max_response_bytes: 5000 } });
    const raw = template(server.url);
    const found = await discover(transport, raw);
    const big = found.tool('big');
    await expect(
      transport.callTool(big, { size: 100 }, big.tool_call_template as GraphqlCallTemplate, callOptions(raw)),
    ).resolves.toHaveLength(100);
    await expect(
      transport.callTool(big, { size: 10_000 }, big.tool_call_template as GraphqlCallTemplate, callOptions(raw)),
    ).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('does not follow redirects', async () => {
    const { call, server } = await setup();
    server.route('/graphql', (_req, res) => {
      res.writeHead(307, { location: `${server.origin}/elsewhere` });
      res.end();
    });
    await expect(call('hello', {})).rejects.toThrow(/redirect \(HTTP 307\)/);
    expect(server.httpHits.map((h) => h.path)).not.toContain('/elsewhere');
  });

  it('rejects a response that is not JSON', async () => {
    const { call, server } = await setup();
    server.route('/graphql', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>oops</html>');
    });
    await expect(call('hello', {})).rejects.toMatchObject({ code: 'PROTOCOL_ERROR' });
  });

  it('reports a closed connection as a transport failure', async () => {
    const { call, server } = await setup();
    server.route('/graphql', (req) => req.socket.destroy());
    const error = await call('hello', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({
      code: 'TRANSPORT_FAILED',
      message: expect.stringMatching(/GraphQL tool gql\.hello.*failed/),
    });
  });
});

describe('graphql auth', () => {
  async function callHello(auth: GraphqlCallTemplate['auth']) {
    const server = await graphqlServer();
    const { transport } = graphqlTransport();
    const raw = template(server.url, { auth });
    const found = await discover(transport, raw);
    server.requests.length = 0;
    const t = found.tool('hello');
    await transport.callTool(t, {}, t.tool_call_template as GraphqlCallTemplate, callOptions(raw));
    return server.requests[0];
  }

  it('sends an api_key header', async () => {
    const req = await callHello({ auth_type: 'api_key', api_key: 'k-1', var_name: 'X-Api-Key', location: 'header' });
    expect(req.headers['x-api-key']).toBe('k-1');
  });

  it('sends an api_key query parameter', async () => {
    const req = await callHello({ auth_type: 'api_key', api_key: 'k-2', var_name: 'key', location: 'query' });
    expect(new URL(req.url).searchParams.get('key')).toBe('k-2');
  });

  it('sends an api_key cookie', async () => {
    const req = await callHello({ auth_type: 'api_key', api_key: 'k-3', var_name: 'session', location: 'cookie' });
    expect(req.headers.cookie).toBe('session=k-3');
  });

  it('sends basic credentials', async () => {
    const req = await callHello({ auth_type: 'basic', username: 'u', password: 'p' });
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('fetches an oauth2 token and sends it as a bearer token', async () => {
    const server = await graphqlServer();
    let tokenRequests = 0;
    server.route('/token', (req, res) => {
      tokenRequests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'tok-9', token_type: 'bearer', expires_in: 3600 }));
      });
    });
    const { transport } = graphqlTransport();
    const raw = template(server.url, {
      auth: { auth_type: 'oauth2', token_url: `${server.origin}/token`, client_id: 'c', client_secret: 's' },
    });
    const found = await discover(transport, raw);
    const t = found.tool('hello');
    await transport.callTool(t, {}, t.tool_call_template as GraphqlCallTemplate, callOptions(raw));
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-9', 'Bearer tok-9']);
    expect(tokenRequests).toBe(1);
  });
});
