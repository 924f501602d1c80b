import { describe, expect, it } from 'vitest';
import { expectRefsResolve } from './openapi-assertions.js';
import { collectRefs } from './openapi-refs.js';
import { convert, convertFixture, oas3, op, toolNamed } from './openapi-helpers.js';

function withSchemas(schemas: Record<string, unknown>, responseSchema: unknown, extra: Record<string, unknown> = {}) {
  return oas3(
    {
      '/x': {
        get: op('x', {
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: responseSchema } } } },
          ...extra,
        }),
      },
    },
    { components: { schemas } },
  );
}

describe('$ref resolution and cycles (docs/design/openapi.md#refs)', () => {
  it('turns a self-referencing schema into $defs with no dangling refs', async () => {
    const t = toolNamed(await convertFixture('graph-3.1.yaml'), 'getNode');
    const out = t.outputs as any;
    expect(out.properties.parent).toEqual({ $ref: '#/$defs/Node' });
    expect(out.properties.children).toEqual({ type: 'array', items: { $ref: '#/$defs/Node' } });
    expect(Object.keys(out.$defs)).toEqual(['Node']);
    expect(out.$defs.Node.properties.parent).toEqual({ $ref: '#/$defs/Node' });
    expect(expectRefsResolve(out).map((r) => r.ref)).toContain('#/$defs/Node');
  });

  it('puts $defs on the root of inputs, so body refs resolve inside inputs', async () => {
    const t = toolNamed(await convertFixture('graph-3.1.yaml'), 'putNode');
    expect((t.inputs as any).properties.body.properties.parent).toEqual({ $ref: '#/$defs/Node' });
    expect(Object.keys((t.inputs as any).$defs)).toEqual(['Node']);
    expectRefsResolve(t.inputs);
  });

  it('handles mutual cycles (Person ↔ Company)', async () => {
    const t = toolNamed(await convertFixture('graph-3.1.yaml'), 'listPeople');
    const out = t.outputs as any;
    expect(out.items.properties.employer.properties.ceo).toEqual({ $ref: '#/$defs/Person' });
    expect(out.items.properties.employer.properties.staff.items).toEqual({ $ref: '#/$defs/Person' });
    expect(Object.keys(out.$defs)).toEqual(['Person']);
    expect(out.$defs.Person.properties.employer.properties.ceo).toEqual({ $ref: '#/$defs/Person' });
    expectRefsResolve(out);
  });

  it('inlines one schema used by many siblings every time (the chain is branch-local)', async () => {
    const t = toolNamed(await convertFixture('graph-3.1.yaml'), 'getTriple');
    const address = { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } };
    const out = t.outputs as any;
    expect(out.properties.first).toEqual(address);
    expect(out.properties.second).toEqual(address);
    expect(out.properties.third).toEqual(address);
    expect(out.properties.nested.properties.fourth).toEqual(address);
    expect(collectRefs(out)).toEqual([]);
    expect(out.$defs).toBeUndefined();
  });

  it('follows ~1/~0/percent-encoded pointers into paths and component names', async () => {
    const t = toolNamed(await convertFixture('graph-3.1.yaml'), 'reuseParam');
    expect((t.inputs as any).properties.id).toEqual({ type: ['string', 'integer'], examples: ['root', 42] });
    expect((t.inputs as any).properties.body.items.properties.name).toEqual({ type: 'string' });
    expect((t.outputs as any).properties.tilde).toEqual({
      type: 'string',
      description: 'a schema whose name needs ~0 and ~1 escapes',
    });
    expectRefsResolve(t.inputs);
  });

  it('replaces external and missing refs with a placeholder and a warning, without fetching', async () => {
    const r = await convertFixture('graph-3.1.yaml');
    const out = toolNamed(r, 'reuseParam').outputs as any;
    expect(out.properties.remote).toEqual({
      description: 'Unresolved external reference: https://schemas.example.com/common.yaml#/Thing',
    });
    expect(out.properties.local).toEqual({ description: 'Unresolved external reference: ./common.yaml#/Other' });
    expect(out.properties.missing).toEqual({ description: 'Unresolved reference: #/components/schemas/DoesNotExist' });
    expect(r.report.dropped).toContainEqual({
      location: 'POST /reuse',
      construct: '$ref https://schemas.example.com/common.yaml#/Thing',
      reason: 'external references are not fetched; replaced by a placeholder schema',
    });
    expect(r.report.warnings).toContainEqual(expect.stringContaining('$ref ./common.yaml#/Other'));
  });

  it('merges keys beside a $ref over the target (and applies nullable to the merged type)', async () => {
    const doc = withSchemas(
      { Name: { type: 'string', description: 'target', maxLength: 5 } },
      {
        type: 'object',
        properties: { n: { $ref: '#/components/schemas/Name', description: 'override', nullable: true } },
      },
    );
    const t = (await convert(doc)).manual.tools[0];
    expect((t.outputs as any).properties.n).toEqual({
      type: ['string', 'null'],
      description: 'override',
      maxLength: 5,
    });
  });

  it('names $defs after the last pointer segment, sanitised, with _2 on clashes', async () => {
    const doc = oas3(
      {
        '/x': {
          get: op('x', {
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree%20Node' } } },
              },
            },
          }),
        },
      },
      {
        components: {
          schemas: {
            'Tree Node': {
              type: 'object',
              properties: {
                next: { $ref: '#/components/schemas/Tree%20Node' },
                other: { $ref: '#/definitions/Tree_Node' },
              },
            },
          },
        },
        definitions: { Tree_Node: { type: 'object', properties: { back: { $ref: '#/definitions/Tree_Node' } } } },
      },
    );
    const out = (await convert(doc)).manual.tools[0].outputs as any;
    expect(out.properties.next).toEqual({ $ref: '#/$defs/Tree_Node' });
    expect(out.properties.other.properties.back).toEqual({ $ref: '#/$defs/Tree_Node_2' });
    expect(Object.keys(out.$defs).sort()).toEqual(['Tree_Node', 'Tree_Node_2']);
    expectRefsResolve(out);
  });

  it('keeps $defs per root: a cyclic schema used in inputs and outputs of many tools resolves in each', async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 5; i++) {
      paths[`/n${i}`] = {
        post: op(`n${i}`, {
          requestBody: {
            content: {
              'application/json': {
                schema: { type: 'object', properties: { wrap: { $ref: '#/components/schemas/Wrapper' } } },
              },
            },
          },
          responses: {
            '200': {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Wrapper' } } },
            },
          },
        }),
      };
    }
    const doc = oas3(paths, {
      components: {
        schemas: {
          Wrapper: {
            type: 'object',
            properties: { leaf: { $ref: '#/components/schemas/Leaf' }, list: { $ref: '#/components/schemas/List' } },
          },
          Leaf: { type: 'string' },
          List: {
            type: 'object',
            properties: { head: { $ref: '#/components/schemas/Leaf' }, tail: { $ref: '#/components/schemas/List' } },
          },
        },
      },
    });
    const r = await convert(doc);
    for (const t of r.manual.tools) {
      expect(expectRefsResolve(t.inputs).length).toBeGreaterThan(0);
      expect(expectRefsResolve(t.outputs).length).toBeGreaterThan(0);
      expect((t.outputs as any).properties.leaf).toEqual({ type: 'string' });
    }
  });

  it('stops inlining at max_schema_nodes and emits further refs as $defs references', async () => {
    // 40 distinct definitions, each referenced once (so inlined while the budget lasts), 11 nodes each.
    const schemas: Record<string, unknown> = {};
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      schemas[`T${i}`] = {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`f${k}`, { type: 'string' }])),
      };
      props[`p${i}`] = { $ref: `#/components/schemas/T${i}` };
    }
    schemas.Root = { type: 'object', properties: props };
    const doc = withSchemas(schemas, { $ref: '#/components/schemas/Root' });
    const unlimited = (await convert(doc, { limits: { max_schema_nodes: 1_000_000 } })).manual.tools[0].outputs;
    expect(unlimited.$defs).toBeUndefined();
    const capped = (await convert(doc, { limits: { max_schema_nodes: 100 } })).manual.tools[0].outputs as any;
    expect(Object.keys(capped.$defs).length).toBeGreaterThan(30);
    expect(capped.properties.p39).toEqual({ $ref: '#/$defs/T39' });
    expectRefsResolve(capped);
  });

  it('emits a large definition used in several places once in $defs instead of copying it per use (docs/design/openapi.md#shared-definitions)', async () => {
    // A binary tree of distinct schemas: copying each shared definition at every use needs 2^13 nodes.
    const schemas: Record<string, unknown> = {};
    for (let i = 0; i < 12; i++) {
      schemas[`L${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/components/schemas/L${i + 1}` }, b: { $ref: `#/components/schemas/L${i + 1}` } },
      };
    }
    schemas.L12 = { type: 'string' };
    const doc = withSchemas(schemas, { $ref: '#/components/schemas/L0' });
    const out = (await convert(doc, { limits: { max_schema_nodes: 1_000_000 } })).manual.tools[0].outputs as any;
    // The root's own ref is inlined; L1..L7 (more than 32 nodes each once expanded) are defined once and
    // referenced from both places; L8..L12 (31 nodes and fewer) stay inline.
    expect(out.properties.a).toEqual({ $ref: '#/$defs/L1' });
    expect(out.properties.b).toEqual({ $ref: '#/$defs/L1' });
    expect(Object.keys(out.$defs).sort()).toEqual(['L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7']);
    expect(out.$defs.L7.properties.a.properties.a.type).toBe('object');
    expectRefsResolve(out);
    expect(JSON.stringify(out).length).toBeLessThan(10_000);

    // A small shared definition and a large one used once are still inlined.
    const once = withSchemas(
      {
        Small: { type: 'string', enum: ['x', 'y'] },
        Big: {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`f${k}`, { type: 'string' }])),
        },
        Holder: {
          type: 'object',
          properties: {
            s1: { $ref: '#/components/schemas/Small' },
            s2: { $ref: '#/components/schemas/Small' },
            big: { $ref: '#/components/schemas/Big' },
          },
        },
      },
      { $ref: '#/components/schemas/Holder' },
    );
    const inlined = (await convert(once)).manual.tools[0].outputs as any;
    expect(inlined.$defs).toBeUndefined();
    expect(inlined.properties.s2).toEqual({ type: 'string', enum: ['x', 'y'] });
    expect(Object.keys(inlined.properties.big.properties)).toHaveLength(40);
  });

  it('keeps the default 10,000-node budget on an exponential schema (fast, small, resolvable)', async () => {
    const schemas: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      schemas[`L${i}`] = {
        type: 'object',
        properties: { a: { $ref: `#/components/schemas/L${i + 1}` }, b: { $ref: `#/components/schemas/L${i + 1}` } },
      };
    }
    schemas.L40 = { type: 'string' };
    const started = performance.now();
    const out = (await convert(withSchemas(schemas, { $ref: '#/components/schemas/L0' }))).manual.tools[0].outputs;
    expect(performance.now() - started).toBeLessThan(2000);
    expectRefsResolve(out);
    expect(JSON.stringify(out).length).toBeLessThan(2_000_000);
  });

  it('resolves parameter, requestBody, response and example refs', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl: 'https://specs.example.org/openapi.json' });
    const list = toolNamed(r, 'listOrders');
    expect((list.inputs.properties as any)['X-Trace-Id']).toEqual({
      type: 'string',
      format: 'uuid',
      description: 'Trace id',
      examples: ['7c2e'],
    });
    expect((list.outputs as any).items.required).toEqual(['id']);
    expect(toolNamed(r, 'createOrder').inputs.required).toEqual(['body']);
    expect((toolNamed(r, 'replaceOrder').inputs.properties as any).request_body.examples).toEqual([
      { id: 'o1' },
      { id: 'o2' },
    ]);
  });

  it('drops non-JSON example values and de-duplicates by canonical JSON', async () => {
    const doc = withSchemas(
      {},
      {
        type: 'object',
        example: { b: 1, a: [1, 2] },
        examples: [{ a: [1, 2], b: 1 }, Number.NaN, { a: [2, 1], b: 1 }],
      },
    );
    const out = (await convert(doc)).manual.tools[0].outputs as any;
    expect(out.examples).toEqual([
      { b: 1, a: [1, 2] },
      { a: [2, 1], b: 1 },
    ]);
    expect(out.example).toBeUndefined();
  });

  it('treats a property literally named $ref, example or xml as a property', async () => {
    const doc = withSchemas(
      {},
      {
        type: 'object',
        properties: { $ref: { type: 'string' }, example: { type: 'integer' }, xml: { type: 'boolean' } },
      },
    );
    const out = (await convert(doc)).manual.tools[0].outputs as any;
    expect(out.properties).toEqual({
      $ref: { type: 'string' },
      example: { type: 'integer' },
      xml: { type: 'boolean' },
    });
  });

  it('never lets a __proto__ name reach the prototype', async () => {
    const doc = JSON.parse(
      '{"openapi":"3.0.0","servers":[{"url":"https://a.example.com"}],"paths":{"/x":{"get":{"operationId":"x","parameters":[{"name":"__proto__","in":"query","schema":{"type":"string"}}],"responses":{}}}}}',
    );
    const t = (await convert(doc)).manual.tools[0];
    expect(Object.getPrototypeOf(t.inputs.properties)).toBe(Object.prototype);
    expect(Object.keys(t.inputs.properties as object)).toEqual(['__proto__']);
  });
});
