/**
 * OpenAPI parameter serialisation, one test per row of the specification's style table (docs/design/openapi.md#parameter-serialization):
 * an OpenAPI spec converted through UtcpClient, called against a local server that records the raw request line
 * and headers. The table's parameter is `color`; its values `blue`, `[blue, black, brown]`, `{R: 100, G: 200, B: 150}`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';

const STRING = 'blue';
const ARRAY = ['blue', 'black', 'brown'];
const OBJECT = { R: 100, G: 200, B: 150 };
const VALUES = { empty: [], string: STRING, array: ARRAY, object: OBJECT } as const;
type Kind = keyof typeof VALUES;

type Row = [
  location: 'path' | 'query' | 'header' | 'cookie',
  style: string,
  explode: boolean,
  kind: Kind,
  expected: string,
];

/** The table rows (OpenAPI 3.1.1 "Style Examples"; label with explode false follows RFC 6570: comma-joined). */
const ROWS: Row[] = [
  ['path', 'matrix', false, 'empty', ';color'],
  ['path', 'matrix', false, 'string', ';color=blue'],
  ['path', 'matrix', false, 'array', ';color=blue,black,brown'],
  ['path', 'matrix', false, 'object', ';color=R,100,G,200,B,150'],
  ['path', 'matrix', true, 'empty', ';color'],
  ['path', 'matrix', true, 'string', ';color=blue'],
  ['path', 'matrix', true, 'array', ';color=blue;color=black;color=brown'],
  ['path', 'matrix', true, 'object', ';R=100;G=200;B=150'],
  ['path', 'label', false, 'string', '.blue'],
  ['path', 'label', false, 'array', '.blue,black,brown'],
  ['path', 'label', false, 'object', '.R,100,G,200,B,150'],
  ['path', 'label', true, 'string', '.blue'],
  ['path', 'label', true, 'array', '.blue.black.brown'],
  ['path', 'label', true, 'object', '.R=100.G=200.B=150'],
  ['path', 'simple', false, 'string', 'blue'],
  ['path', 'simple', false, 'array', 'blue,black,brown'],
  ['path', 'simple', false, 'object', 'R,100,G,200,B,150'],
  ['path', 'simple', true, 'string', 'blue'],
  ['path', 'simple', true, 'array', 'blue,black,brown'],
  ['path', 'simple', true, 'object', 'R=100,G=200,B=150'],
  ['query', 'form', false, 'empty', 'color='],
  ['query', 'form', false, 'string', 'color=blue'],
  ['query', 'form', false, 'array', 'color=blue,black,brown'],
  ['query', 'form', false, 'object', 'color=R,100,G,200,B,150'],
  ['query', 'form', true, 'empty', 'color='],
  ['query', 'form', true, 'string', 'color=blue'],
  ['query', 'form', true, 'array', 'color=blue&color=black&color=brown'],
  ['query', 'form', true, 'object', 'R=100&G=200&B=150'],
  ['query', 'spaceDelimited', false, 'array', 'color=blue%20black%20brown'],
  ['query', 'spaceDelimited', false, 'object', 'color=R%20100%20G%20200%20B%20150'],
  ['query', 'pipeDelimited', false, 'array', 'color=blue|black|brown'],
  ['query', 'pipeDelimited', false, 'object', 'color=R|100|G|200|B|150'],
  ['query', 'deepObject', true, 'object', 'color[R]=100&color[G]=200&color[B]=150'],
  ['header', 'simple', false, 'string', 'blue'],
  ['header', 'simple', false, 'array', 'blue,black,brown'],
  ['header', 'simple', false, 'object', 'R,100,G,200,B,150'],
  ['header', 'simple', true, 'string', 'blue'],
  ['header', 'simple', true, 'array', 'blue,black,brown'],
  ['header', 'simple', true, 'object', 'R=100,G=200,B=150'],
  ['cookie', 'form', false, 'string', 'color=blue'],
  ['cookie', 'form', false, 'array', 'color=blue,black,brown'],
  ['cookie', 'form', false, 'object', 'color=R,100,G,200,B,150'],
  ['cookie', 'form', true, 'string', 'color=blue'],
  ['cookie', 'form', true, 'array', 'color=blue; color=black; color=brown'],
  ['cookie', 'form', true, 'object', 'R=100; G=200; B=150'],
];

function operationId(location: string, style: string, explode: boolean): string {
  return `${location}_${style}_${explode ? 'x' : 'n'}`;
}

function spec(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [location, style, explode] of ROWS) {
    const id = operationId(location, style, explode);
    const path = location === 'path' ? `/${id}/{color}` : `/${id}`;
    paths[path] = {
      get: {
        operationId: id,
        parameters: [
          {
            name: location === 'header' ? 'X-Color' : 'color',
            in: location,
            required: true,
            style,
            explode,
            schema: {},
          },
        ],
        responses: { '200': { description: 'ok' } },
      },
    };
  }
  return { openapi: '3.1.0', info: { title: 'styles', version: '1' }, paths };
}

describe('OpenAPI style/explode on the wire (every row of the style table)', () => {
  const seen: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];
  let server: ReturnType<typeof createServer>;
  let client: UtcpClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = await UtcpClient.create({});
    const r = await client.registerManual({
      name: 'styles',
      call_template_type: 'text',
      content: JSON.stringify(spec()),
      base_url: base,
    });
    expect(r.success, r.errors.join('; ')).toBe(true);
  });

  afterAll(async () => {
    await client?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it.each(ROWS)('%s %s explode=%s %s → %s', async (location, style, explode, kind, expected) => {
    const id = operationId(location, style, explode);
    const name = location === 'header' ? 'X-Color' : 'color';
    await client.callTool(`styles.${id}`, { [name]: VALUES[kind] });
    const { url, headers } = seen.at(-1)!;
    if (location === 'path') expect(url).toBe(`/${id}/${expected}`);
    else if (location === 'query') expect(url).toBe(`/${id}?${expected}`);
    else if (location === 'header') expect(headers['x-color']).toBe(expected);
    else expect(headers.cookie).toBe(expected);
  });

  it('maps Swagger 2.0 collectionFormat (csv by default, multi, ssv, pipes)', async () => {
    const doc = {
      swagger: '2.0',
      info: { title: 'c', version: '1' },
      paths: Object.fromEntries(
        [undefined, 'multi', 'ssv', 'pipes'].map((f) => [
          `/c-${f ?? 'default'}`,
          {
            get: {
              operationId: `c_${f ?? 'default'}`,
              parameters: [
                {
                  name: 'ids',
                  in: 'query',
                  type: 'array',
                  items: { type: 'integer' },
                  ...(f ? { collectionFormat: f } : {}),
                },
              ],
              responses: { '200': { description: 'ok' } },
            },
          },
        ]),
      ),
    };
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await client.registerManual({
      name: 'collections',
      call_template_type: 'text',
      content: JSON.stringify(doc),
      base_url: base,
    });
    expect(r.success, r.errors.join('; ')).toBe(true);
    const expected = { default: 'ids=1,2,3', multi: 'ids=1&ids=2&ids=3', ssv: 'ids=1%202%203', pipes: 'ids=1|2|3' };
    for (const [f, query] of Object.entries(expected)) {
      await client.callTool(`collections.c_${f}`, { ids: [1, 2, 3] });
      expect(seen.at(-1)!.url).toBe(`/c-${f}?${query}`);
    }
  });

  it('records the styles in the template extension field', async () => {
    const tool = await client.getTool('styles.query_deepObject_x');
    expect((tool!.tool_call_template as unknown as Record<string, unknown>).parameter_serialization).toEqual({
      color: { in: 'query', style: 'deepObject', explode: true },
    });
  });

  it('sends a parameter declared with content: application/json as one JSON value in every location (docs/design/openapi.md#content-parameters)', async () => {
    // Directus-style `filter` and `deep`: an object that must arrive whole, not exploded into form fields.
    const json = { content: { 'application/json': { schema: { type: 'object' } } } };
    const doc = {
      openapi: '3.0.3',
      info: { title: 'content', version: '1' },
      paths: {
        '/items/{sel}': {
          get: {
            operationId: 'items',
            parameters: [
              { name: 'filter', in: 'query', ...json },
              { name: 'sel', in: 'path', required: true, ...json },
              { name: 'X-Deep', in: 'header', ...json },
              { name: 'prefs', in: 'cookie', ...json },
              { name: 'note', in: 'query', content: { 'text/plain': { schema: { type: 'string' } } } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await client.registerManual({
      name: 'content',
      call_template_type: 'text',
      content: JSON.stringify(doc),
      base_url: base,
    });
    expect(r.success, r.errors.join('; ')).toBe(true);
    const filter = { status: { _eq: 'published' }, tags: ['a b', 'c&d'] };
    await client.callTool('content.items', {
      filter,
      sel: { id: 1 },
      'X-Deep': { translations: { _limit: 2 } },
      prefs: { a: 'x;y' },
      note: 'plain text',
    });
    const { url, headers } = seen.at(-1)!;
    const enc = (v: unknown) =>
      encodeURIComponent(JSON.stringify(v)).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      );
    expect(url).toBe(`/items/${enc({ id: 1 })}?filter=${enc(filter)}&note=plain%20text`);
    expect(JSON.parse(new URL(url, base).searchParams.get('filter')!)).toEqual(filter);
    expect(headers['x-deep']).toBe('{"translations":{"_limit":2}}');
    expect(headers.cookie).toBe(`prefs=${enc({ a: 'x;y' })}`);
    const tool = await client.getTool('content.items');
    expect((tool!.tool_call_template as unknown as Record<string, unknown>).parameter_serialization).toMatchObject({
      filter: { in: 'query', content_type: 'application/json' },
    });
  });
});
