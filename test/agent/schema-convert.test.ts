import { describe, expect, it } from 'vitest';
import { dropStrictModeNulls } from '../../src/agent/index.js';
import {
  toAnthropicInputSchema,
  toObjectRootSchema,
  toOpenAIParameters,
} from '../../src/agent/export/schema-convert.js';

describe('toObjectRootSchema', () => {
  it('gives an empty or missing schema an object root', () => {
    expect(toObjectRootSchema({})).toEqual({ type: 'object', properties: {} });
    expect(toObjectRootSchema(undefined)).toEqual({ type: 'object', properties: {} });
  });

  it('adds the object type when only properties are given and drops $schema/$id', () => {
    expect(
      toObjectRootSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'x',
        properties: { a: { type: 'string' } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
  });

  it('replaces a non-object root with an empty object schema', () => {
    expect(toObjectRootSchema({ type: 'string' })).toEqual({ type: 'object', properties: {} });
  });

  it('merges a root allOf into one object', () => {
    const schema = {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] },
      ],
    };
    expect(toAnthropicInputSchema(schema)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    });
  });

  it('flattens a root oneOf into optional properties and describes the choice', () => {
    const schema = {
      description: 'Locate a place.',
      oneOf: [
        { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        { type: 'object', properties: { lat: { type: 'number' }, lon: { type: 'number' } }, required: ['lat', 'lon'] },
      ],
    };
    const out = toAnthropicInputSchema(schema);
    expect(out).toEqual({
      type: 'object',
      description: 'Locate a place.\n\nUse exactly one of these argument sets: (1) city; (2) lat + lon.',
      properties: { city: { type: 'string' }, lat: { type: 'number' }, lon: { type: 'number' } },
    });
    expect(out).not.toHaveProperty('oneOf');
  });

  it('keeps properties required by every variant of a root anyOf, and nested combinators untouched', () => {
    const schema = {
      anyOf: [
        {
          properties: { id: { type: 'string' }, kind: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
          required: ['id', 'kind'],
        },
        { properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id'] },
      ],
    };
    const out = toAnthropicInputSchema(schema);
    expect(out.required).toEqual(['id']);
    expect((out.properties as Record<string, unknown>).kind).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
  });

  it('resolves a root $ref into $defs and keeps $defs', () => {
    const schema = {
      $ref: '#/$defs/Args',
      $defs: { Args: { type: 'object', properties: { q: { type: 'string' } } }, Other: { type: 'string' } },
    };
    expect(toObjectRootSchema(schema)).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
      $defs: schema.$defs,
    });
  });
});

describe('toOpenAIParameters strict mode', () => {
  const schema = {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 2, format: 'regex' },
      limit: { type: 'integer', default: 10, minimum: 1 },
      when: { type: 'string', format: 'date-time' },
      filter: {
        type: 'object',
        properties: { tag: { type: 'string', enum: ['a', 'b'] } },
        required: ['tag'],
      },
      owner: { $ref: '#/$defs/User' },
    },
    required: ['query'],
    $defs: { User: { type: 'object', properties: { login: { type: 'string', nullable: true } }, required: ['login'] } },
  };

  it('requires every property, makes optional ones nullable, closes objects and moves unsupported keywords to the description', () => {
    const { parameters, strict } = toOpenAIParameters(schema, { strict: true });
    expect(strict).toBe(true);
    expect(parameters).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', description: '(minLength: 2; format: "regex")' },
        limit: { type: ['integer', 'null'], minimum: 1, description: '(default: 10)' },
        when: { type: ['string', 'null'], format: 'date-time' },
        filter: {
          type: ['object', 'null'],
          properties: { tag: { type: 'string', enum: ['a', 'b'] } },
          required: ['tag'],
          additionalProperties: false,
        },
        owner: { anyOf: [{ $ref: '#/$defs/User' }, { type: 'null' }] },
      },
      required: ['query', 'limit', 'when', 'filter', 'owner'],
      additionalProperties: false,
      $defs: {
        User: {
          type: 'object',
          properties: { login: { type: ['string', 'null'] } },
          required: ['login'],
          additionalProperties: false,
        },
      },
    });
  });

  it('falls back to the plain schema when strict mode cannot express it', () => {
    const freeForm = { type: 'object', properties: { metadata: { type: 'object' } } };
    expect(toOpenAIParameters(freeForm, { strict: true })).toEqual({ parameters: freeForm, strict: false });
    const map = {
      type: 'object',
      properties: { labels: { type: 'object', additionalProperties: { type: 'string' } } },
    };
    expect(toOpenAIParameters(map, { strict: true }).strict).toBe(false);
    const negated = { type: 'object', properties: { a: { not: { type: 'string' } } } };
    expect(toOpenAIParameters(negated, { strict: true }).strict).toBe(false);
  });

  it('turns oneOf into anyOf below the root', () => {
    const s = {
      type: 'object',
      properties: { v: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
      required: ['v'],
    };
    expect(toOpenAIParameters(s, { strict: true }).parameters).toEqual({
      type: 'object',
      properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      required: ['v'],
      additionalProperties: false,
    });
  });

  it('leaves schemas alone when strict mode is not asked for', () => {
    expect(toOpenAIParameters(schema)).toEqual({ parameters: schema, strict: false });
  });
});

describe('dropStrictModeNulls', () => {
  const schema = {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer' },
      note: { type: ['string', 'null'] },
      opts: { $ref: '#/$defs/Opts' },
      list: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } },
    },
    required: ['city'],
    $defs: { Opts: { type: 'object', properties: { verbose: { type: 'boolean' } } } },
  };

  it('removes nulls where the schema does not accept null, nested ones included, and keeps accepted nulls', () => {
    expect(
      dropStrictModeNulls(
        { city: 'Paris', days: null, note: null, opts: { verbose: null }, list: [{ x: null }, { x: 'y' }] },
        schema,
      ),
    ).toEqual({ city: 'Paris', note: null, opts: {}, list: [{}, { x: 'y' }] });
  });
});
