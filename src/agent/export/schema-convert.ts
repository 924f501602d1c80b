/**
 * Tool input schemas converted to what each provider accepts: an object root with `type: "object"`,
 * no root-level oneOf/anyOf/allOf (merged into one object), and, for OpenAI strict mode, every property
 * required (optional ones nullable), `additionalProperties: false` and unsupported keywords dropped. `$defs` are kept.
 */
import type { JsonSchema } from '../../index.js';
import { isPlainObject } from '../../core/guards.js';

type Schema = Record<string, unknown>;

const MAX_DEPTH = 32;

/** @internal */
export function isSchemaObject(value: unknown): value is Schema {
  return isPlainObject(value);
}

/** @internal Resolves a local JSON pointer (`#/$defs/Pet`) against the root schema. */
export function resolveLocalRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let current: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchemaObject(current)) return undefined;
    current = current[key];
  }
  return isSchemaObject(current) ? current : undefined;
}

/** @internal The `type` keyword as a list, or undefined when absent. */
export function typesOf(schema: Schema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

function requiredOf(schema: Schema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
}

function propertiesOf(schema: Schema): Schema {
  return isSchemaObject(schema.properties) ? schema.properties : {};
}

function isObjectLike(schema: Schema): boolean {
  const types = typesOf(schema);
  return types === undefined ? true : types.includes('object');
}

/** allOf members all apply: properties merged, required lists joined. */
function mergeAll(base: Schema, members: Schema[]): Schema {
  const out: Schema = { ...base };
  const properties: Schema = { ...propertiesOf(base) };
  const required = new Set(requiredOf(base));
  for (const m of members) {
    Object.assign(properties, propertiesOf(m));
    for (const r of requiredOf(m)) required.add(r);
    if (out.description === undefined && typeof m.description === 'string') out.description = m.description;
  }
  out.properties = properties;
  if (required.size > 0) out.required = [...required];
  return out;
}

function describeVariant(variant: Schema, index: number): string {
  const required = requiredOf(variant);
  const names = required.length > 0 ? required : Object.keys(propertiesOf(variant));
  const label = typeof variant.title === 'string' ? `${variant.title}: ` : '';
  return `(${index + 1}) ${label}${names.length > 0 ? names.join(' + ') : 'no arguments'}`;
}

/** oneOf/anyOf variants: every property offered, required only what all variants require; the choice is described. */
function mergeAny(base: Schema, variants: Schema[]): Schema {
  const objects = variants.filter(isObjectLike);
  if (objects.length === 0) return base;
  const properties: Schema = { ...propertiesOf(base) };
  for (const v of objects)
    for (const [k, s] of Object.entries(propertiesOf(v))) if (!(k in properties)) properties[k] = s;
  const common = objects.map(requiredOf).reduce((acc, r) => acc.filter((x) => r.includes(x)));
  const required = [...new Set([...requiredOf(base), ...common])];
  const choice = `Use exactly one of these argument sets: ${objects.map(describeVariant).join('; ')}.`;
  const out: Schema = {
    ...base,
    properties,
    description: typeof base.description === 'string' && base.description ? `${base.description}\n\n${choice}` : choice,
  };
  if (required.length > 0) out.required = required;
  else delete out.required;
  return out;
}

function flattenRoot(schema: Schema, root: Schema, depth: number): Schema {
  let out: Schema = { ...schema };
  if (typeof out.$ref === 'string' && depth < MAX_DEPTH) {
    const target = resolveLocalRef(out.$ref, root);
    if (target) {
      const { $ref: _ref, ...rest } = out;
      out = { ...flattenRoot(target, root, depth + 1), ...rest };
    }
  }
  if (Array.isArray(out.allOf)) {
    const members = out.allOf.filter(isSchemaObject).map((m) => flattenRoot(m, root, depth + 1));
    delete out.allOf;
    out = mergeAll(out, members);
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (!Array.isArray(out[key])) continue;
    const variants = (out[key] as unknown[]).filter(isSchemaObject).map((v) => flattenRoot(v, root, depth + 1));
    delete out[key];
    out = mergeAny(out, variants);
  }
  return out;
}

/**
 * The schema with an object root every provider accepts: `type: "object"`, `properties` present,
 * root `$ref`/allOf/oneOf/anyOf merged into one object. A non-object root becomes an empty object schema.
 */
export function toObjectRootSchema(schema: JsonSchema | undefined): JsonSchema {
  if (!isSchemaObject(schema)) return { type: 'object', properties: {} };
  const root: Schema = { ...schema };
  delete root.$schema;
  delete root.$id;
  delete root.nullable;
  const flat = flattenRoot(root, root, 0);
  if (!isObjectLike(flat)) return { type: 'object', properties: {} };
  flat.type = 'object';
  if (!isSchemaObject(flat.properties)) flat.properties = {};
  return flat;
}

/** The `input_schema` Anthropic accepts for a tool. */
export function toAnthropicInputSchema(schema: JsonSchema | undefined): JsonSchema {
  return toObjectRootSchema(schema);
}

// ---------------------------------------------------------------- OpenAI strict mode

const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'title',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** Constraints strict mode rejects, kept as a hint in the description instead. */
const HINTED_KEYWORDS = ['default', 'minLength', 'maxLength', 'uniqueItems', 'minProperties', 'maxProperties'];
/** Keywords strict mode cannot express at all: such a schema is sent non-strict. */
const INEXPRESSIBLE = [
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'prefixItems',
  'dependentSchemas',
  'dependentRequired',
  'unevaluatedProperties',
  'propertyNames',
  'contains',
];

/** @internal The schema also accepting null (strict mode's way to make a property optional). */
export function withNull(schema: Schema): Schema {
  if (typeof schema.$ref === 'string' || schema.const !== undefined) return { anyOf: [schema, { type: 'null' }] };
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.some((m) => isSchemaObject(m) && m.type === 'null')
      ? schema
      : { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  }
  const out: Schema = { ...schema };
  if (typeof out.type === 'string') out.type = out.type === 'null' ? 'null' : [out.type, 'null'];
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

function strictKeywords(schema: Schema): Schema {
  const out: Schema = {};
  const hints: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'format') {
      if (typeof value === 'string' && STRICT_FORMATS.has(value)) out.format = value;
      else hints.push(`format: ${JSON.stringify(value)}`);
    } else if (HINTED_KEYWORDS.includes(key)) {
      hints.push(`${key}: ${JSON.stringify(value)}`);
    } else if (STRICT_KEYWORDS.has(key)) {
      out[key] = value;
    }
  }
  if (hints.length > 0)
    out.description = [out.description, `(${hints.join('; ')})`]
      .filter((d) => typeof d === 'string' && d !== '')
      .join(' ');
  return out;
}

function strictMap(map: unknown, depth: number): Schema | null {
  if (!isSchemaObject(map)) return null;
  const out: Schema = {};
  for (const [key, value] of Object.entries(map)) {
    const converted = strictNode(value, depth + 1);
    if (!converted) return null;
    out[key] = converted;
  }
  return out;
}

function strictObject(out: Schema, original: Schema, depth: number): Schema | null {
  const properties = propertiesOf(original);
  const keys = Object.keys(properties);
  // A free-form object (no declared properties) or a typed map cannot be written in strict mode.
  if (keys.length === 0 && original.additionalProperties !== false) return null;
  if (isSchemaObject(original.additionalProperties) || original.additionalProperties === true) return null;
  const required = new Set(requiredOf(original));
  const converted: Schema = {};
  for (const key of keys) {
    const node = strictNode(properties[key], depth + 1);
    if (!node) return null;
    converted[key] = required.has(key) ? node : withNull(node);
  }
  return { ...out, properties: converted, required: keys, additionalProperties: false };
}

function strictNode(input: unknown, depth: number): Schema | null {
  if (!isSchemaObject(input) || depth > MAX_DEPTH) return null;
  let schema: Schema = { ...input };
  if (INEXPRESSIBLE.some((k) => k in schema)) return null;
  if (typeof schema.$ref === 'string') return schema.$ref.startsWith('#/') ? { $ref: schema.$ref } : null;
  if (schema.nullable === true) {
    delete schema.nullable;
    schema = withNull(schema);
  }
  if (Array.isArray(schema.oneOf)) {
    if (Array.isArray(schema.anyOf)) return null;
    schema.anyOf = schema.oneOf;
    delete schema.oneOf;
  }
  if (Array.isArray(schema.allOf)) {
    const members = schema.allOf;
    if (!members.every((m) => isSchemaObject(m) && isObjectLike(m) && m.$ref === undefined)) return null;
    delete schema.allOf;
    schema = mergeAll({ ...schema, type: schema.type ?? 'object' }, members as Schema[]);
  }
  let out = strictKeywords(schema);
  for (const key of ['$defs', 'definitions'] as const) {
    if (out[key] === undefined) continue;
    const defs = strictMap(out[key], depth);
    if (!defs) return null;
    out[key] = defs;
  }
  if (Array.isArray(out.anyOf)) {
    const members = out.anyOf.map((m) => strictNode(m, depth + 1));
    if (members.some((m) => m === null)) return null;
    out.anyOf = members;
  }
  const types = typesOf(out);
  if (types?.includes('object') || (types === undefined && isSchemaObject(out.properties))) {
    const object = strictObject({ ...out, type: out.type ?? 'object' }, schema, depth);
    if (!object) return null;
    out = object;
  }
  if (types?.includes('array')) {
    const items = strictNode(out.items, depth + 1);
    if (!items) return null;
    out.items = items;
  }
  const typed =
    typesOf(out) !== undefined || Array.isArray(out.enum) || out.const !== undefined || Array.isArray(out.anyOf);
  return typed ? out : null;
}

export interface OpenAIParameters {
  parameters: JsonSchema;
  /** True when strict mode was asked for and the schema could be expressed in it. */
  strict: boolean;
}

/**
 * The `parameters` schema for an OpenAI function tool. With `strict`, returns the strict-mode form,
 * or the plain form with `strict: false` when the schema cannot be expressed in strict mode
 * (free-form objects, `not`, `patternProperties`, remote `$ref`…).
 */
export function toOpenAIParameters(
  schema: JsonSchema | undefined,
  options: { strict?: boolean } = {},
): OpenAIParameters {
  const parameters = toObjectRootSchema(schema);
  if (!options.strict) return { parameters, strict: false };
  const strict = strictNode(parameters, 0);
  return strict ? { parameters: strict, strict: true } : { parameters, strict: false };
}
