import type { JsonSchema } from '../../core/types.js';
import type { FieldInfo, FullType, InputValue, TypeRef } from './introspection-query.js';
import type { GraphqlParser } from './load-modules.js';

/** Selections nest at most this deep (the root field's own selection is depth 1). */
const MAX_SELECTION_DEPTH = 2;

const SCALARS: Record<string, JsonSchema> = {
  Int: { type: 'integer' },
  Float: { type: 'number' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  ID: { type: 'string' },
};

/** The named type at the bottom of LIST/NON_NULL wrappers. */
export function namedType(ref: TypeRef): TypeRef {
  let t = ref;
  while ((t.kind === 'LIST' || t.kind === 'NON_NULL') && t.ofType) t = t.ofType;
  return t;
}

/** GraphQL type notation, e.g. `[String!]!`. */
export function typeNotation(ref: TypeRef): string {
  if (ref.kind === 'NON_NULL' && ref.ofType) return `${typeNotation(ref.ofType)}!`;
  if (ref.kind === 'LIST' && ref.ofType) return `[${typeNotation(ref.ofType)}]`;
  return ref.name ?? 'String';
}

function hasDefault(value: InputValue): boolean {
  return value.defaultValue !== null && value.defaultValue !== undefined;
}

/** A non-null argument without a default must be supplied. */
export function isRequired(value: InputValue): boolean {
  return value.type.kind === 'NON_NULL' && !hasDefault(value);
}

export interface SelectedOutput {
  /** `{ a b c { d } }`, or '' for leaf types. */
  selection: string;
  schema: JsonSchema;
}

/**
 * Turns GraphQL types into JSON Schemas (inputs, with `$defs` for input objects) and builds
 * selection sets with matching output schemas, over one introspected schema.
 */
export class GraphqlSchemaMapper {
  readonly #types: Map<string, FullType>;
  readonly #parser: GraphqlParser;

  constructor(types: readonly FullType[], parser: GraphqlParser) {
    this.#types = new Map(types.filter((t) => t && typeof t.name === 'string').map((t) => [t.name, t]));
    this.#parser = parser;
  }

  type(name: string | null | undefined): FullType | undefined {
    return name ? this.#types.get(name) : undefined;
  }

  /** The `inputs` schema of a field: one property per argument. */
  inputsFor(args: readonly InputValue[]): JsonSchema {
    const defs: Record<string, JsonSchema> = {};
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const arg of args) {
      properties[arg.name] = this.#inputValueSchema(arg, defs);
      if (isRequired(arg)) required.push(arg.name);
    }
    const schema: JsonSchema = { type: 'object', properties };
    if (required.length > 0) schema.required = required;
    if (Object.keys(defs).length > 0) schema.$defs = defs;
    return schema;
  }

  #inputValueSchema(value: InputValue, defs: Record<string, JsonSchema>): JsonSchema {
    const schema: JsonSchema = { ...this.#inputSchema(value.type, defs) };
    if (value.description) schema.description = value.description;
    if (hasDefault(value)) {
      const parsed = this.#literal(value.defaultValue as string);
      if (parsed !== undefined) schema.default = parsed;
    }
    return schema;
  }

  #inputSchema(ref: TypeRef, defs: Record<string, JsonSchema>): JsonSchema {
    if (ref.kind === 'NON_NULL' && ref.ofType) return this.#inputSchema(ref.ofType, defs);
    if (ref.kind === 'LIST' && ref.ofType) return { type: 'array', items: this.#inputSchema(ref.ofType, defs) };
    const full = this.type(ref.name);
    if (ref.kind === 'ENUM') return enumSchema(full);
    if (ref.kind === 'INPUT_OBJECT' && ref.name) {
      if (!(ref.name in defs)) {
        defs[ref.name] = {}; // placeholder first: input objects may refer to themselves
        const properties: Record<string, JsonSchema> = {};
        const required: string[] = [];
        for (const field of full?.inputFields ?? []) {
          properties[field.name] = this.#inputValueSchema(field, defs);
          if (isRequired(field)) required.push(field.name);
        }
        const def: JsonSchema = { type: 'object', properties };
        if (required.length > 0) def.required = required;
        if (full?.description) def.description = full.description;
        defs[ref.name] = def;
      }
      return { $ref: `#/$defs/${ref.name}` };
    }
    return scalarSchema(ref.name);
  }

  /** Converts a GraphQL literal default (`10`, `"x"`, `RED`, `{a: 1}`) to JSON; undefined when unparsable. */
  #literal(text: string): unknown {
    try {
      return this.#parser.valueFromASTUntyped(this.#parser.parseValue(text));
    } catch {
      return undefined;
    }
  }

  /** The selection set and output schema for a field's return type. */
  outputFor(field: FieldInfo): SelectedOutput {
    return this.#output(field.type, 1);
  }

  #output(ref: TypeRef, depth: number): SelectedOutput {
    if (ref.kind === 'NON_NULL' && ref.ofType) return this.#output(ref.ofType, depth);
    if (ref.kind === 'LIST' && ref.ofType) {
      const inner = this.#output(ref.ofType, depth);
      return { selection: inner.selection, schema: { type: 'array', items: inner.schema } };
    }
    const full = this.type(ref.name);
    if (ref.kind === 'ENUM') return { selection: '', schema: enumSchema(full) };
    if (ref.kind === 'SCALAR') return { selection: '', schema: scalarSchema(ref.name) };
    if (ref.kind === 'UNION') return typenameOnly(full);
    return this.#objectSelection(full, depth);
  }

  #objectSelection(full: FullType | undefined, depth: number): SelectedOutput {
    const parts: string[] = [];
    const properties: Record<string, JsonSchema> = {};
    for (const field of full?.fields ?? []) {
      if ((field.args ?? []).some(isRequired)) continue;
      const kind = namedType(field.type).kind;
      if (kind === 'SCALAR' || kind === 'ENUM') {
        parts.push(field.name);
        properties[field.name] = describe(this.#output(field.type, depth).schema, field.description);
      } else if ((kind === 'OBJECT' || kind === 'INTERFACE' || kind === 'UNION') && depth < MAX_SELECTION_DEPTH) {
        const sub = this.#output(field.type, depth + 1);
        parts.push(`${field.name} ${sub.selection}`);
        properties[field.name] = describe(sub.schema, field.description);
      }
    }
    if (parts.length === 0) return typenameOnly(full);
    const schema: JsonSchema = { type: 'object', properties };
    if (full?.description) schema.description = full.description;
    return { selection: `{ ${parts.join(' ')} }`, schema };
  }
}

function typenameOnly(full: FullType | undefined): SelectedOutput {
  const schema: JsonSchema = { type: 'object', properties: { __typename: { type: 'string' } } };
  if (full?.description) schema.description = full.description;
  return { selection: '{ __typename }', schema };
}

function describe(schema: JsonSchema, description: string | null | undefined): JsonSchema {
  return description ? { ...schema, description } : schema;
}

function enumSchema(full: FullType | undefined): JsonSchema {
  return { type: 'string', enum: (full?.enumValues ?? []).map((v) => v.name) };
}

function scalarSchema(name: string | null): JsonSchema {
  if (name && SCALARS[name]) return { ...SCALARS[name] };
  return { description: `GraphQL scalar ${name ?? 'unknown'}` };
}
