/**
 * The OpenAPI → JSON Schema 2020-12 keyword table (docs/design/openapi.md#schema-translation).
 *
 * Every keyword of a schema object is classified here; the expander keeps, rewrites or drops it.
 * Nothing OpenAPI-only survives (`nullable`, `x-nullable`, `example`, `discriminator`, `xml`,
 * `externalDocs`, vendor `x-*` keys), and every kept keyword has the value shape the 2020-12
 * meta-schema and Ajv demand, so a generated schema always compiles.
 */

export type KeywordKind =
  /** A single subschema (object or boolean). */
  | 'schema'
  /** A non-empty array of subschemas. */
  | 'list'
  /** An object whose values are subschemas. */
  | 'map'
  /** `items`: a subschema, or a draft-4 tuple array (→ `prefixItems`). */
  | 'items'
  | 'string'
  | 'count'
  | 'number'
  | 'positive'
  | 'boolean'
  | 'exclusive'
  | 'type'
  | 'enum'
  | 'required'
  | 'any'
  | 'example'
  | 'examples'
  | 'nullable'
  | 'dependencies'
  | 'additionalItems'
  | 'pattern'
  /** OpenAPI-only annotation with no JSON Schema meaning: dropped and reported. */
  | 'openapi'
  /** Identifier keywords that would re-base `$ref`s inside a tool schema: dropped and reported. */
  | 'identifier';

export const KEYWORDS = new Map<string, KeywordKind>([
  ['additionalProperties', 'schema'],
  ['not', 'schema'],
  ['if', 'schema'],
  ['then', 'schema'],
  ['else', 'schema'],
  ['contains', 'schema'],
  ['propertyNames', 'schema'],
  ['unevaluatedItems', 'schema'],
  ['unevaluatedProperties', 'schema'],
  ['contentSchema', 'schema'],
  ['allOf', 'list'],
  ['anyOf', 'list'],
  ['oneOf', 'list'],
  ['prefixItems', 'list'],
  ['properties', 'map'],
  ['patternProperties', 'map'],
  ['$defs', 'map'],
  ['definitions', 'map'],
  ['dependentSchemas', 'map'],
  ['items', 'items'],
  ['additionalItems', 'additionalItems'],
  ['dependencies', 'dependencies'],
  ['title', 'string'],
  ['description', 'string'],
  ['format', 'string'],
  ['$comment', 'string'],
  ['contentMediaType', 'string'],
  ['contentEncoding', 'string'],
  ['pattern', 'pattern'],
  ['minLength', 'count'],
  ['maxLength', 'count'],
  ['minItems', 'count'],
  ['maxItems', 'count'],
  ['minProperties', 'count'],
  ['maxProperties', 'count'],
  ['minContains', 'count'],
  ['maxContains', 'count'],
  ['minimum', 'number'],
  ['maximum', 'number'],
  ['multipleOf', 'positive'],
  ['uniqueItems', 'boolean'],
  ['readOnly', 'boolean'],
  ['writeOnly', 'boolean'],
  ['deprecated', 'boolean'],
  ['exclusiveMinimum', 'exclusive'],
  ['exclusiveMaximum', 'exclusive'],
  ['type', 'type'],
  ['enum', 'enum'],
  ['required', 'required'],
  ['dependentRequired', 'any'],
  ['const', 'any'],
  ['default', 'any'],
  ['example', 'example'],
  ['examples', 'examples'],
  ['nullable', 'nullable'],
  ['x-nullable', 'nullable'],
  ['discriminator', 'openapi'],
  ['xml', 'openapi'],
  ['externalDocs', 'openapi'],
  ['$id', 'identifier'],
  ['$schema', 'identifier'],
  ['$anchor', 'identifier'],
  ['$dynamicAnchor', 'identifier'],
  ['$dynamicRef', 'identifier'],
  ['$recursiveRef', 'identifier'],
  ['$recursiveAnchor', 'identifier'],
  ['$vocabulary', 'identifier'],
]);

/** Keywords that only annotate: they stay on the outside when a schema is wrapped to admit `null`. */
export const ANNOTATIONS = new Set([
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
]);

export const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

const patternValidity = new Map<string, boolean>();

/** True when `pattern` compiles as Ajv compiles it (ECMAScript with the `u` flag). */
export function isValidPattern(pattern: string): boolean {
  let ok = patternValidity.get(pattern);
  if (ok === undefined) {
    try {
      new RegExp(pattern, 'u');
      ok = true;
    } catch {
      ok = false;
    }
    if (patternValidity.size > 10_000) patternValidity.clear();
    patternValidity.set(pattern, ok);
  }
  return ok;
}

/** `minLength: "3"` and `maxItems: 2.0` are fixed; anything else is not a count. */
export function asCount(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

export function asNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** Syntactic check: does this (translated) schema admit `null` on its own? */
export function admitsNull(schema: unknown): boolean {
  if (schema === true) return true;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return false;
  const s = schema as Record<string, unknown>;
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  if (
    Array.isArray(s.anyOf) &&
    s.anyOf.some((b) => typeof b === 'object' && b !== null && (b as Record<string, unknown>).type === 'null')
  )
    return true;
  return false;
}
