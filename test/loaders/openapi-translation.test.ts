import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { UtcpLimitError } from '../../src/index.js';
import { convertOpenApiSpec } from '../../src/loaders/openapi/convert-open-api-spec.js';
import { convert, oas3, op } from './openapi-helpers.js';
import { createSchemaChecker } from './schema-check.js';

const checker = createSchemaChecker();

function withResponse(schema: unknown, schemas: Record<string, unknown> = {}, version = '3.0.3') {
  return {
    ...oas3(
      {
        '/x': {
          get: op('x', { responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } } }),
        },
      },
      { components: { schemas } },
    ),
    openapi: version,
  };
}

function withBody(schema: unknown, schemas: Record<string, unknown> = {}) {
  return oas3(
    { '/x': { post: op('x', { requestBody: { required: true, content: { 'application/json': { schema } } } }) } },
    { components: { schemas } },
  );
}

async function outputOf(schema: unknown, schemas: Record<string, unknown> = {}, version?: string) {
  const r = await convert(withResponse(schema, schemas, version));
  const out = r.manual.tools[0].outputs;
  expect(checker.check(out)).toEqual([]);
  return { out: out as any, report: r.report };
}

function accepts(schema: unknown, value: unknown): boolean {
  return new Ajv2020({ strict: false, logger: false }).validate(schema as object, value);
}

describe('OpenAPI → JSON Schema 2020-12 (docs/design/openapi.md#schema-translation)', () => {
  it('nullable with a type widens the type (and the enum)', async () => {
    const { out, report } = await outputOf({ type: 'string', enum: ['a', 'b'], nullable: true });
    expect(out).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
    expect(report.changed.map((c) => c.construct)).toEqual(['nullable']);
  });

  it('nullable without a type and beside oneOf/anyOf/allOf admits null through anyOf', async () => {
    for (const combinator of ['oneOf', 'anyOf', 'allOf']) {
      const { out } = await outputOf({
        [combinator]: [{ type: 'string' }, { type: 'integer' }],
        nullable: true,
        description: 'd',
      });
      expect(out).toEqual({
        description: 'd',
        anyOf: [{ [combinator]: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }],
      });
      expect(accepts(out, null)).toBe(true);
      expect(accepts(out, {})).toBe(false);
    }
  });

  it('nullable with a type and an allOf still admits null (the allOf would refuse it)', async () => {
    const { out } = await outputOf(
      { type: 'object', allOf: [{ $ref: '#/components/schemas/Base' }], nullable: true },
      { Base: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
    );
    expect(accepts(out, null)).toBe(true);
    expect(accepts(out, { id: 1 })).toBe(true);
    expect(accepts(out, {})).toBe(false);
  });

  it('nullable beside a $ref (inlined or cyclic) admits null without touching the shared target', async () => {
    const schemas = {
      Name: { type: 'string', maxLength: 3 },
      Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node', nullable: true } } },
    };
    const { out } = await outputOf(
      {
        type: 'object',
        properties: {
          n: { $ref: '#/components/schemas/Name', nullable: true },
          m: { $ref: '#/components/schemas/Name' },
          node: { $ref: '#/components/schemas/Node' },
        },
      },
      schemas,
    );
    expect(out.properties.n).toEqual({ type: ['string', 'null'], maxLength: 3 });
    expect(out.properties.m).toEqual({ type: 'string', maxLength: 3 });
    expect(out.$defs.Node.properties.next).toEqual({ anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] });
    expect(accepts(out, { node: { next: { next: null } } })).toBe(true);
  });

  it('a oneOf whose branches are all nullable accepts null once', async () => {
    const { out } = await outputOf({
      oneOf: [
        { type: 'string', nullable: true },
        { type: 'integer', nullable: true },
      ],
    });
    expect(accepts(out, null)).toBe(true);
    expect(accepts(out, 'a')).toBe(true);
    expect(accepts(out, 1.5)).toBe(false);
  });

  it('nullable: false and unconstrained nullable schemas just lose the keyword', async () => {
    expect((await outputOf({ type: 'string', nullable: false })).out).toEqual({ type: 'string' });
    expect((await outputOf({ description: 'anything', nullable: true })).out).toEqual({ description: 'anything' });
  });

  it('Swagger 2.0 x-nullable and type: file', async () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: '1' },
      host: 'api.example.com',
      paths: {
        '/up': {
          post: {
            operationId: 'up',
            consumes: ['multipart/form-data'],
            parameters: [{ name: 'file', in: 'formData', type: 'file', required: true }],
            responses: {
              '200': {
                description: 'ok',
                schema: { type: 'object', properties: { note: { type: 'string', 'x-nullable': true } } },
              },
            },
          },
        },
      },
    };
    const r = await convert(doc);
    const t = r.manual.tools[0];
    // A file input (docs/design/openapi.md#files): base64 text or { data, filename, content_type }.
    expect((t.inputs as any).properties.body.properties.file.anyOf[0]).toEqual({
      type: 'string',
      contentEncoding: 'base64',
    });
    expect(t.tool_call_template).toMatchObject({ file_fields: ['file'] });
    expect((t.outputs as any).properties.note).toEqual({ type: ['string', 'null'] });
    for (const s of [t.inputs, t.outputs]) expect(checker.check(s)).toEqual([]);
  });

  it('boolean exclusiveMinimum/Maximum, example → examples, discriminator, xml, externalDocs and x-* removed', async () => {
    const { out, report } = await outputOf({
      type: 'object',
      discriminator: { propertyName: 'kind' },
      xml: { name: 'thing' },
      externalDocs: { url: 'https://docs.example.com' },
      'x-internal': { $ref: '#/nowhere' },
      example: { kind: 'a' },
      properties: {
        n: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: false },
        kind: { type: 'string' },
      },
    });
    expect(out).toEqual({
      type: 'object',
      examples: [{ kind: 'a' }],
      properties: { n: { type: 'number', exclusiveMinimum: 0, maximum: 10 }, kind: { type: 'string' } },
    });
    expect(report.dropped.map((d) => d.construct).sort()).toEqual([
      'keyword discriminator',
      'keyword externalDocs',
      'keyword xml',
      'x-* extension keywords',
    ]);
    expect(report.warnings).toContainEqual(expect.stringContaining('Changed boolean exclusiveMinimum'));
  });

  it('readOnly properties are not inputs; writeOnly properties are not outputs', async () => {
    const schemas = {
      User: {
        type: 'object',
        required: ['id', 'name', 'password'],
        properties: {
          id: { type: 'integer', readOnly: true },
          created: { $ref: '#/components/schemas/Stamp' },
          name: { type: 'string' },
          password: { type: 'string', writeOnly: true },
        },
      },
      Stamp: { type: 'string', format: 'date-time', readOnly: true },
    };
    const doc = oas3(
      {
        '/users': {
          post: op('createUser', {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } },
            },
            responses: {
              '201': {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } },
              },
            },
          }),
        },
      },
      { components: { schemas } },
    );
    const r = await convert(doc);
    const t = r.manual.tools[0];
    const body = (t.inputs as any).properties.body;
    expect(Object.keys(body.properties)).toEqual(['name', 'password']);
    expect(body.required).toEqual(['name', 'password']);
    expect(Object.keys((t.outputs as any).properties)).toEqual(['id', 'created', 'name']);
    expect((t.outputs as any).required).toEqual(['id', 'name']);
    expect(r.report.dropped.map((d) => d.construct)).toEqual(
      expect.arrayContaining(['readOnly property', 'writeOnly property']),
    );
  });

  it('passes 3.1 / 2020-12 schemas through', async () => {
    const schema = {
      type: ['object', 'null'],
      properties: {
        tuple: { type: 'array', prefixItems: [{ type: 'string' }, { const: 1 }], items: false },
        kind: { const: 'x' },
        when: { type: 'string', format: 'date-time', examples: ['2024-01-01T00:00:00Z'] },
      },
      dependentRequired: { a: ['b'] },
      unevaluatedProperties: false,
      $comment: 'kept',
    };
    const { out, report } = await outputOf(schema, {}, '3.1.0');
    expect(out).toEqual(schema);
    expect(report.dropped).toEqual([]);
    expect(report.changed).toEqual([]);
  });

  it('repairs what the meta-schema or Ajv would refuse, and reports it', async () => {
    const { out, report } = await outputOf({
      type: 'object',
      required: true,
      properties: {
        a: { type: 'String', pattern: '[\\w-.]+', minLength: '2', maxLength: -1 },
        b: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false },
        c: { type: 'date' },
        d: { enum: [] },
        e: { type: 'object', dependencies: { x: ['y'], z: { required: ['w'] } } },
        f: 'not a schema',
        g: { $id: 'https://elsewhere.example.com/', type: 'integer', multipleOf: 0 },
      },
      patternProperties: { '[': { type: 'string' }, '^x-': { type: 'string' } },
    });
    expect(out.properties.a).toEqual({ type: 'string', minLength: 2 });
    expect(out.properties.b).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'integer' }],
      items: false,
    });
    expect(out.properties.c).toEqual({});
    expect(out.properties.d).toEqual({});
    expect(out.properties.e).toEqual({
      type: 'object',
      dependentRequired: { x: ['y'] },
      dependentSchemas: { z: { required: ['w'] } },
    });
    expect(out.properties.f).toEqual({});
    expect(out.properties.g).toEqual({ type: 'integer' });
    expect(out.patternProperties).toEqual({ '^x-': { type: 'string' } });
    expect(out.required).toBeUndefined();
    expect(report.warnings.length).toBeGreaterThan(5);
  });

  it('accepts { milestone: null } for GitHub-style oneOf + nullable request bodies', async () => {
    const r = await convert(
      withBody({
        type: 'object',
        properties: { milestone: { oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true } },
      }),
    );
    const inputs = r.manual.tools[0].inputs;
    expect(checker.check(inputs)).toEqual([]);
    expect(accepts(inputs, { body: { milestone: null } })).toBe(true);
    expect(accepts(inputs, { body: { milestone: 3 } })).toBe(true);
    expect(accepts(inputs, { body: { milestone: [] } })).toBe(false);
  });
});

/** A small spec whose 2,500 operations share a deep, mutually referencing $ref graph (issue #12 item 1). */
function hostileSpec(operations: number, definitions: number): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  const ref = (i: number) => ({ $ref: `#/components/schemas/N${i % definitions}` });
  for (let i = 0; i < definitions; i++) {
    schemas[`N${i}`] = {
      type: 'object',
      properties: {
        a: ref(i + 1),
        b: ref(i * 7 + 3),
        c: { type: 'array', items: ref(i * 13 + 5) },
        s: { type: 'string' },
      },
    };
  }
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++) {
    paths[`/p${i}`] = {
      post: {
        operationId: `op${i}`,
        requestBody: { content: { 'application/json': { schema: ref(i) } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: ref(i + 1) } } } },
      },
    };
  }
  return oas3(paths, { components: { schemas } });
}

describe('expansion limits per document (docs/design/openapi.md#expansion-limits)', () => {
  it('fails a small spec with a mutually referencing $ref graph fast, with a typed error naming the limit', () => {
    const doc = hostileSpec(2500, 400);
    expect(JSON.stringify(doc).length).toBeLessThan(800_000);
    const heapBefore = process.memoryUsage().heapUsed;
    let error: unknown;
    try {
      convertOpenApiSpec(doc, { manualName: 'hostile' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UtcpLimitError);
    expect((error as UtcpLimitError).code).toBe('LIMIT_EXCEEDED');
    expect((error as UtcpLimitError).limit).toBe('max_openapi_expansion_factor');
    expect((error as Error).message).toContain('limits.max_openapi_expansion_factor');
    // Each $ref is translated once per direction and shared: far below the 1 GiB the attack needed.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(300 * 1024 * 1024);
  });

  it('converts the same graph when the limits allow it, sharing every translated subtree', () => {
    const doc = hostileSpec(200, 60);
    const r = convertOpenApiSpec(doc, {
      manualName: 'hostile',
      limits: { max_openapi_expansion_factor: 100_000, max_schema_nodes: 300 },
    });
    expect(r.manual.tools).toHaveLength(200);
    const defs = r.manual.tools.map((t) => (t.outputs as any).$defs?.N5).filter(Boolean);
    expect(defs.length).toBeGreaterThan(100);
    // One object per form (the memoised expansion, or the shallow one once a root's budget is spent).
    expect(new Set(defs).size).toBeLessThanOrEqual(2);
    for (const t of r.manual.tools.slice(0, 3)) expect(checker.check(t.outputs)).toEqual([]);
  });

  it('bounds the work: the schema-object limit also stops a conversion, by name', () => {
    let error: unknown;
    try {
      convertOpenApiSpec(hostileSpec(50, 400), { manualName: 'hostile', limits: { max_openapi_schema_work: 500 } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UtcpLimitError);
    expect((error as UtcpLimitError).limit).toBe('max_openapi_schema_work');
  });
});
