import { describe, expect, it } from 'vitest';
import { convert, convertFixture, oas3, op, toolNamed } from './openapi-helpers.js';

const urls = (r: Awaited<ReturnType<typeof convert>>) => r.manual.tools.map((t) => t.tool_call_template.url);

function swagger2(extra: Record<string, unknown>): Record<string, unknown> {
  return { swagger: '2.0', info: { title: 't', version: '1' }, paths: { '/items': { get: op('items') } }, ...extra };
}

describe('base URL (docs/design/openapi.md#base-url)', () => {
  it('substitutes server variables: default, else the first enum value', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl: 'https://specs.example.org/openapi.json' });
    expect(toolNamed(r, 'listOrders').tool_call_template.url).toBe('https://eu.shop.example.com/v1/orders');
  });

  it('skips an operation whose server variable has neither default nor enum', async () => {
    const r = await convert(
      oas3(
        { '/a': { get: op('a') } },
        { servers: [{ url: 'https://{tenant}.example.com', variables: { tenant: { description: 'x' } } }] },
      ),
    );
    expect(r.manual.tools).toEqual([]);
    expect(r.report.skipped[0].reason).toBe('server variable {tenant} has no default or enum value');
  });

  it('prefers operation servers over path-item servers over root servers', async () => {
    const r = await convert(
      oas3({
        '/a': {
          servers: [{ url: 'https://path.example.com/p' }],
          get: op('pathLevel'),
          post: op('opLevel', { servers: [{ url: 'https://op.example.com/o/' }] }),
        },
        '/b': { get: op('rootLevel') },
      }),
    );
    expect(urls(r)).toEqual([
      'https://path.example.com/p/a',
      'https://op.example.com/o/a',
      'https://api.example.com/b',
    ]);
  });

  it('resolves a relative server against the spec URL (WHATWG resolution)', async () => {
    const r = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: '/api/v3' }] }), {
      specUrl: 'https://x.io/openapi.json',
    });
    expect(urls(r)).toEqual(['https://x.io/api/v3/pets']);
    const rel = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: 'v2' }] }), {
      specUrl: 'https://x.io/specs/openapi.json',
    });
    expect(urls(rel)).toEqual(['https://x.io/specs/v2/pets']);
  });

  it('uses "/" (resolved against the spec URL) when there are no servers', async () => {
    const r = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [] }), {
      specUrl: 'https://x.io/docs/openapi.json',
    });
    expect(urls(r)).toEqual(['https://x.io/pets']);
  });

  it('binds a relative server to the ${BASE_URL} variable when there is no http(s) spec URL (docs/design/openapi.md#base-url-variable)', async () => {
    for (const specUrl of [undefined, 'file:///tmp/openapi.json']) {
      const r = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: '/api/' }] }), { specUrl });
      expect(urls(r)).toEqual(['${BASE_URL}/api/pets']);
      expect(r.report.skipped).toEqual([]);
      expect(r.report.variables).toEqual(['demo_BASE_URL']);
      expect(r.report.warnings).toContainEqual(
        expect.stringContaining(
          'relative server URL "/api/" at GET /pets: bound to the variable ${BASE_URL}: set demo_BASE_URL',
        ),
      );
    }
    expect(urls(await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [] })))).toEqual(['${BASE_URL}/pets']);
    expect(urls(await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: 'v2' }] })))).toEqual([
      '${BASE_URL}/v2/pets',
    ]);
  });

  it('lets servers win over the spec URL host (specs on raw file hosts)', async () => {
    const r = await convert(oas3({ '/pets': { get: op('pets') } }), {
      specUrl: 'https://raw.githubusercontent.com/acme/api/main/openapi.json',
    });
    expect(urls(r)).toEqual(['https://api.example.com/pets']);
  });

  it('uses base_url verbatim for every operation', async () => {
    const r = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: '/relative' }] }), {
      baseUrl: 'http://127.0.0.1:8080/mock/',
    });
    expect(urls(r)).toEqual(['http://127.0.0.1:8080/mock/pets']);
  });

  it('skips servers that are not http(s)', async () => {
    const r = await convert(oas3({ '/pets': { get: op('pets') } }, { servers: [{ url: 'wss://stream.example.com' }] }));
    expect(r.report.skipped[0].reason).toContain('does not use http(s)');
  });

  describe('Swagger 2.0 host, basePath and schemes', () => {
    it('prefers https when listed, else the first scheme', async () => {
      expect(urls(await convert(swagger2({ host: 'api.example.com', schemes: ['http', 'https'] })))).toEqual([
        'https://api.example.com/items',
      ]);
      expect(urls(await convert(swagger2({ host: 'localhost:8080', schemes: ['http'] })))).toEqual([
        'http://localhost:8080/items',
      ]);
    });

    it('falls back to the spec URL scheme, else https, and to basePath "/"', async () => {
      expect(
        urls(await convert(swagger2({ host: 'api.example.com' }), { specUrl: 'http://127.0.0.1:9/s.json' })),
      ).toEqual(['http://api.example.com/items']);
      expect(urls(await convert(swagger2({ host: 'api.example.com', basePath: 'v1/' })))).toEqual([
        'https://api.example.com/v1/items',
      ]);
    });

    it('binds to ${BASE_URL} + basePath when there is no host and no http(s) spec URL', async () => {
      const r = await convert(swagger2({ basePath: '/v1' }));
      expect(urls(r)).toEqual(['${BASE_URL}/v1/items']);
      expect(r.report.variables).toEqual(['demo_BASE_URL']);
    });
  });

  describe('remote→loopback rule (docs/design/security.md#remote-loopback, docs/design/security.md#attack-cases)', () => {
    const remote = 'https://specs.example.com/openapi.json';

    it.each([
      'http://127.0.0.1:9090',
      'http://0.0.0.0',
      'http://[::ffff:127.0.0.1]',
      'http://127.0.0.2',
      'https://api.localhost/v1',
    ])('fails a remote spec whose server is %s, mentioning loopback', async (server) => {
      await expect(
        convert(oas3({ '/a': { get: op('a') } }, { servers: [{ url: server }] }), { specUrl: remote }),
      ).rejects.toMatchObject({
        code: 'URL_POLICY',
        message: expect.stringContaining('loopback'),
      });
    });

    it.each(['127.0.0.1', 'localhost', 'localhost:3000'])(
      'fails a remote Swagger 2.0 spec with host %s',
      async (host) => {
        await expect(convert(swagger2({ host }), { specUrl: remote })).rejects.toThrow(/loopback/);
      },
    );

    it('fails on an operation-level loopback server too', async () => {
      const doc = oas3({ '/a': { get: op('a', { servers: [{ url: 'http://localhost:1/x' }] }) } });
      await expect(convert(doc, { specUrl: remote })).rejects.toThrow(/loopback/);
    });

    it('allows loopback servers from a loopback spec, from local documents and with base_url', async () => {
      const doc = oas3({ '/a': { get: op('a') } }, { servers: [{ url: 'http://127.0.0.1:9090' }] });
      expect(urls(await convert(doc, { specUrl: 'http://localhost:8000/openapi.json' }))).toEqual([
        'http://127.0.0.1:9090/a',
      ]);
      expect(urls(await convert(doc, { specUrl: 'file:///srv/openapi.json' }))).toEqual(['http://127.0.0.1:9090/a']);
      expect(urls(await convert(doc))).toEqual(['http://127.0.0.1:9090/a']);
      expect(urls(await convert(doc, { specUrl: remote, baseUrl: 'http://localhost:1' }))).toEqual([
        'http://localhost:1/a',
      ]);
    });

    it('allows remote → remote', async () => {
      const r = await convert(oas3({ '/a': { get: op('a') } }), { specUrl: remote });
      expect(urls(r)).toEqual(['https://api.example.com/a']);
    });
  });
});
