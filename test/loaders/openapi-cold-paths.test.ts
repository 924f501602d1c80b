/**
 * The shortcuts the converter takes for speed (docs/design/performance.md#cold-openapi) give the same schemas as the
 * full rewrite: `type`/`required` already clean are kept as they are, anything else is still rewritten, and examples
 * de-duplicated pairwise agree with de-duplication by canonical JSON text.
 */
import { describe, expect, it } from 'vitest';
import { jsonTreeBound, parseDocumentText } from '../../src/core/document.js';
import { surveyDocument } from '../../src/loaders/openapi/expansion-budget.js';
import { mergeExamples } from '../../src/loaders/openapi/merge-examples.js';
import { convert, oas3, op } from './openapi-helpers.js';

/** One GET operation whose 200 response has `schema`; its `outputs` are returned. */
async function outputsOf(schema: unknown): Promise<any> {
  const doc = oas3({
    '/x': {
      get: op('x', {
        responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } },
      }),
    },
  });
  return (await convert(doc)).manual.tools[0].outputs;
}

describe('type and required already in JSON Schema form (docs/design/performance.md#cold-openapi)', () => {
  it('keeps a clean schema as it is, value for value', async () => {
    const schema = {
      type: 'object',
      properties: { a: { type: ['string', 'null'] }, b: { type: 'integer' } },
      required: ['a', 'b'],
    };
    expect(await outputsOf(schema)).toEqual(schema);
  });

  it('still rewrites every type that is not a distinct lowercase JSON type', async () => {
    const out = await outputsOf({
      type: 'object',
      properties: {
        upper: { type: 'String' },
        twice: { type: ['string', 'string'] },
        unknown: { type: 'text' },
        empty: { type: [] },
        file: { type: 'file' },
        mixed: { type: ['integer', 'Null'] },
      },
    });
    expect(out.properties).toEqual({
      upper: { type: 'string' },
      twice: { type: ['string'] },
      unknown: {},
      empty: {},
      file: { type: 'string', format: 'binary' },
      mixed: { type: ['integer', 'null'] },
    });
  });

  it('still fixes required lists that repeat, hold non-strings or are empty', async () => {
    const props = { a: { type: 'string' }, b: { type: 'string' } };
    expect((await outputsOf({ type: 'object', properties: props, required: ['a', 'b', 'a'] })).required).toEqual([
      'a',
      'b',
    ]);
    expect((await outputsOf({ type: 'object', properties: props, required: ['a', 1] })).required).toEqual(['a']);
    expect(await outputsOf({ type: 'object', properties: props, required: [] })).not.toHaveProperty('required');
    const many = Array.from({ length: 40 }, (_, i) => `p${i}`);
    expect((await outputsOf({ type: 'object', required: [...many, 'p3'] })).required).toEqual(many);
  });

  it('drops a writeOnly property from a clean required list of outputs', async () => {
    const out = await outputsOf({
      type: 'object',
      properties: { id: { type: 'string' }, secret: { type: 'string', writeOnly: true } },
      required: ['id', 'secret'],
    });
    expect(out.required).toEqual(['id']);
    expect(Object.keys(out.properties)).toEqual(['id']);
  });

  it('rewrites nullable beside a clean type', async () => {
    expect(await outputsOf({ type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
  });
});

describe('example de-duplication (docs/design/performance.md#cold-openapi)', () => {
  const cases: Array<[string, unknown[], unknown[]]> = [
    [
      'key order ignored',
      [
        { a: 1, b: [1, 2] },
        { b: [1, 2], a: 1 },
      ],
      [{ a: 1, b: [1, 2] }],
    ],
    [
      'array order kept',
      [
        [1, 2],
        [2, 1],
      ],
      [
        [1, 2],
        [2, 1],
      ],
    ],
    ['true is not 1', [true, 1, 'true', '1'], [true, 1, 'true', '1']],
    ['0 and -0 are one number', [0, -0], [0]],
    ['null, {} and [] differ', [null, {}, [], null], [null, {}, []]],
    ['an extra key differs', [{ a: 1 }, { a: 1, b: 2 }, { a: 1 }], [{ a: 1 }, { a: 1, b: 2 }]],
    ['undefined-valued key is not JSON', [{ a: 1 }, { a: 1, b: undefined }], [{ a: 1 }]],
    [
      'nested objects',
      [{ x: { y: [{ z: 1 }] } }, { x: { y: [{ z: 2 }] } }, { x: { y: [{ z: 1 }] } }],
      [{ x: { y: [{ z: 1 }] } }, { x: { y: [{ z: 2 }] } }],
    ],
    ['non-JSON values dropped', [Number.NaN, Number.POSITIVE_INFINITY, 'a', 'a'], ['a']],
  ];

  it.each(cases)('%s, with few candidates', (_name, candidates, expected) => {
    expect(mergeExamples(candidates)).toEqual(expected);
  });

  it.each(cases)('%s, with many candidates (compared by canonical text)', (_name, candidates, expected) => {
    const filler = Array.from({ length: 9 }, (_, i) => ({ filler: i }));
    expect(mergeExamples([...candidates, ...filler])).toEqual([...expected, ...filler]);
  });

  it('keeps the first of equal candidates, in order', () => {
    const first = { a: 1, b: 2 };
    const merged = mergeExamples([first, { b: 2, a: 1 }, 'x']);
    expect(merged).toEqual([first, 'x']);
    expect(merged[0]).toBe(first);
  });
});

describe('the document survey of a document parsed from JSON (docs/design/performance.md#cold-openapi)', () => {
  const text = JSON.stringify(
    oas3({
      '/a': {
        get: op('a', {
          responses: {
            '200': {
              description: 'ok',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
          },
        }),
      },
      '/b': {
        get: op('b', {
          responses: {
            '200': {
              description: 'ok',
              content: {
                'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } },
              },
            },
          },
        }),
      },
    }),
  ).replace(
    '"paths"',
    '"components":{"schemas":{"Pet":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}}},"paths"',
  );

  it('counts the same objects and refs as the walk with a visited set', async () => {
    const parsed = await parseDocumentText(text);
    const copy = structuredClone(parsed); // the same tree, not marked as parsed here: walked with the set
    // Marked as a tree with its bound (half the text's length); a YAML document or a caller's object is not.
    expect(jsonTreeBound(parsed)).toBe(text.length >> 1);
    expect(jsonTreeBound(copy)).toBeUndefined();
    expect(jsonTreeBound(await parseDocumentText('openapi: 3.0.0\npaths: {}\n'))).toBeUndefined();
    const fast = surveyDocument(parsed);
    const slow = surveyDocument(copy);
    expect(fast.nodes).toBe(slow.nodes);
    expect([...fast.refUses]).toEqual([...slow.refUses]);
    expect(fast.refUses.get('#/components/schemas/Pet')).toBe(2);
  });

  it('still counts a shared object once, and ends on a cycle, when the parsed document was changed afterwards', async () => {
    const parsed = (await parseDocumentText(text)) as any;
    const before = surveyDocument(parsed).nodes;
    const pet = parsed.components.schemas.Pet;
    parsed.components.schemas.Alias = pet; // one object in two places
    pet.properties.self = pet; // and a cycle
    const after = surveyDocument(parsed);
    expect(after.nodes).toBe(before);
  });
});
