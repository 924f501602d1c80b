import { describe, expect, it } from 'vitest';
import { convert, convertFixture, oas3, op, toolNamed } from './openapi-helpers.js';

const specUrl = 'https://specs.example.org/shop/openapi.json';

describe('parameters → inputs (docs/design/openapi.md#parameters)', () => {
  it('always emits type: object with properties, and required only when non-empty', async () => {
    const r = await convert(
      oas3({
        '/a': { get: op('a') },
        '/b': {
          get: op('b', { parameters: [{ name: 'q', in: 'query', required: true, schema: { type: 'string' } }] }),
        },
      }),
    );
    expect(r.manual.tools[0].inputs).toEqual({ type: 'object', properties: {} });
    expect(r.manual.tools[1].inputs).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
    });
  });

  it('merges path-level and operation-level parameters by (name, in), the operation overriding', async () => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'listOrders');
    expect((t.inputs.properties as any).limit).toEqual({
      type: 'integer',
      maximum: 50,
      minimum: 0,
      description: 'operation-level limit',
    });
    expect(t.inputs.required).toEqual(['limit', 'session']);
  });

  it('ignores Accept, Content-Type and Authorization header parameters (and reports them)', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl });
    const t = toolNamed(r, 'listOrders');
    expect(Object.keys(t.inputs.properties as object)).toEqual(['X-Trace-Id', 'limit', 'session', 'filter']);
    expect(t.tool_call_template.header_fields).toEqual(['X-Trace-Id']);
    expect(
      r.report.dropped
        .filter((d) => d.location === 'GET /orders' && d.construct.startsWith('header'))
        .map((d) => d.construct),
    ).toEqual(['header parameter Accept', 'header parameter Content-Type', 'header parameter Authorization']);
  });

  it('lists cookie parameters in cookie_fields', async () => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'listOrders');
    expect(t.tool_call_template.cookie_fields).toEqual(['session']);
    expect((t.inputs.properties as any).session).toEqual({ type: 'string' });
  });

  it('reads a parameter schema from its first content entry', async () => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'listOrders');
    expect((t.inputs.properties as any).filter).toEqual({ type: 'object', properties: { status: { type: 'string' } } });
  });

  it('keeps one parameter per name by priority path > query > header > cookie, with warnings', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl });
    const t = toolNamed(r, 'get_orders_orderId');
    expect(t.inputs).toEqual({ type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] });
    expect(t.tool_call_template).not.toHaveProperty('header_fields');
    expect(r.report.dropped).toEqual(
      expect.arrayContaining([
        {
          location: 'GET /orders/{orderId}',
          construct: 'query parameter orderId',
          reason: 'clashes with the path parameter of the same name',
        },
        {
          location: 'GET /orders/{orderId}',
          construct: 'header parameter orderId',
          reason: 'clashes with the path parameter of the same name',
        },
      ]),
    );
  });

  it('makes path parameters required even when the spec says otherwise', async () => {
    const r = await convert(
      oas3({
        '/a/{id}': {
          get: op('a', { parameters: [{ name: 'id', in: 'path', required: false, schema: { type: 'integer' } }] }),
        },
      }),
    );
    expect(r.manual.tools[0].inputs.required).toEqual(['id']);
  });

  it('adds an undeclared path template variable as a required string (and reports it)', async () => {
    const r = await convert(
      oas3({
        '/a/{id}/b/{sub}': {
          get: op('a', { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }] }),
        },
      }),
    );
    const t = r.manual.tools[0];
    expect(t.inputs).toEqual({
      type: 'object',
      properties: { id: { type: 'integer' }, sub: { type: 'string' } },
      required: ['id', 'sub'],
    });
    expect(r.report.dropped).toContainEqual({
      location: 'GET /a/{id}/b/{sub}',
      construct: 'path parameter sub',
      reason: 'not declared; added as a required string input',
    });
  });

  it('reports unresolvable parameters instead of failing', async () => {
    const r = await convert(
      oas3({
        '/a': {
          get: op('a', {
            parameters: [{ $ref: '#/components/parameters/Nope' }, { $ref: 'other.yaml#/P' }, { in: 'query' }],
          }),
        },
      }),
    );
    expect(r.manual.tools[0].inputs).toEqual({ type: 'object', properties: {} });
    expect(r.report.dropped.map((d) => d.reason)).toEqual([
      'unresolved reference #/components/parameters/Nope',
      'external reference other.yaml#/P is not fetched',
      'no name or no "in"',
    ]);
  });
});

describe('request bodies (docs/design/openapi.md#request-bodies)', () => {
  it('renames the body property when a parameter is already called body', async () => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'replaceOrder');
    expect(t.tool_call_template.body_field).toBe('request_body');
    expect(Object.keys(t.inputs.properties as object)).toEqual(['orderId', 'body', 'request_body']);
    expect(t.inputs.required).toEqual(['orderId', 'request_body']);
  });

  it('goes on to request_body_2 when request_body is taken too', async () => {
    const params = ['body', 'request_body'].map((name) => ({ name, in: 'query', schema: { type: 'string' } }));
    const r = await convert(
      oas3({
        '/a': {
          post: op('a', { parameters: params, requestBody: { content: { 'application/json': { schema: {} } } } }),
        },
      }),
    );
    expect(r.manual.tools[0].tool_call_template.body_field).toBe('request_body_2');
  });

  it('prefers JSON over XML and carries the body description; required only when requestBody.required', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl });
    const t = toolNamed(r, 'replaceOrder');
    expect(t.tool_call_template.content_type).toBe('application/json');
    expect((t.inputs.properties as any).request_body.description).toBe('The replacement order');
    expect(toolNamed(r, 'upload').inputs.required).toBeUndefined();
  });

  it.each([
    ['upload', 'application/x-www-form-urlencoded'],
    ['uploadMultipart', 'multipart/form-data'],
    ['uploadRaw', 'text/plain; charset=utf-8'],
    ['patchAnything', 'application/json'],
  ])('chooses the media type of %s as %s', async (name, contentType) => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), name);
    expect(t.tool_call_template.content_type).toBe(contentType);
    expect(t.tool_call_template.body_field).toBe('body');
  });

  it('prefers +json over form, octet-stream over an unknown type, and falls back to the first listed', async () => {
    const body = (content: Record<string, unknown>) => ({ requestBody: { content } });
    const r = await convert(
      oas3({
        '/a': {
          post: op(
            'a',
            body({
              'application/x-www-form-urlencoded': { schema: {} },
              'application/merge-patch+json': { schema: {} },
            }),
          ),
        },
        '/b': { post: op('b', body({ 'image/png': { schema: {} }, 'application/octet-stream': { schema: {} } })) },
        '/c': { post: op('c', body({ 'image/png': { schema: {} }, 'image/jpeg': { schema: {} } })) },
      }),
    );
    expect(r.manual.tools.map((t) => t.tool_call_template.content_type)).toEqual([
      'application/merge-patch+json',
      'application/octet-stream',
      'image/png',
    ]);
  });

  it('omits body_field and keeps application/json when there is no body', async () => {
    const t = (await convert(oas3({ '/a': { get: op('a') } }))).manual.tools[0];
    expect(t.tool_call_template).toMatchObject({ content_type: 'application/json' });
    expect(t.tool_call_template).not.toHaveProperty('body_field');
  });

  it('uses the first JSON-like operation consumes for a 2.0 body, else the root consumes', async () => {
    const doc = {
      swagger: '2.0',
      host: 'api.example.com',
      consumes: ['application/vnd.api+json'],
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            consumes: ['text/xml', 'application/json; charset=utf-8'],
            parameters: [{ in: 'body', name: 'x', schema: { type: 'object' } }],
            responses: {},
          },
        },
        '/b': {
          post: {
            operationId: 'b',
            parameters: [{ in: 'body', name: 'x', required: true, schema: { type: 'object' } }],
            responses: {},
          },
        },
      },
    };
    const r = await convert(doc);
    expect(r.manual.tools.map((t) => t.tool_call_template.content_type)).toEqual([
      'application/json; charset=utf-8',
      'application/vnd.api+json',
    ]);
    expect(r.manual.tools.map((t) => t.inputs.required)).toEqual([undefined, ['body']]);
  });

  it('uses multipart/form-data for 2.0 formData when consumes allows only multipart', async () => {
    const doc = {
      swagger: '2.0',
      host: 'api.example.com',
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            consumes: ['multipart/form-data'],
            parameters: [{ in: 'formData', name: 'note', type: 'string' }],
            responses: {},
          },
        },
      },
    };
    const t = (await convert(doc)).manual.tools[0];
    expect(t.tool_call_template.content_type).toBe('multipart/form-data');
    expect(t.inputs).toEqual({
      type: 'object',
      properties: { body: { type: 'object', properties: { note: { type: 'string' } } } },
    });
  });

  it('resolves allOf bodies and keeps the composition', async () => {
    const doc = oas3(
      {
        '/a': {
          post: op('a', {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    allOf: [
                      { $ref: '#/components/schemas/Base' },
                      { type: 'object', properties: { extra: { type: 'integer' } } },
                    ],
                  },
                },
              },
            },
          }),
        },
      },
      {
        components: { schemas: { Base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
      },
    );
    const body = ((await convert(doc)).manual.tools[0].inputs.properties as any).body;
    expect(body.allOf[0]).toEqual({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] });
    expect(body.allOf[1].properties.extra).toEqual({ type: 'integer' });
  });
});
