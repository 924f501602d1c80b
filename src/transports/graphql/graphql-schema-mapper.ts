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
    if ((ref.kind === 'UNION' || ref.kind === 'INTERFACE') && (full?.possibleTypes?.length ?? 0) > 0)
      return this.#abstractSelection(full!, depth);
    if (ref.kind === 'UNION') return typenameOnly(full);
    return this.#objectSelection(full, depth);
  }

  /** The selected fields of an object or interface type: `[selection parts, properties]`. */
  #fieldsOf(full: FullType | undefined, depth: number): { parts: string[]; properties: Record<string, JsonSchema> } {
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
    return { parts, properties };
  }

  #objectSelection(full: FullType | undefined, depth: number): SelectedOutput {
    const { parts, properties } = this.#fieldsOf(full, depth);
    if (parts.length === 0) return typenameOnly(full);
    const schema: JsonSchema = { type: 'object', properties };
    if (full?.description) schema.description = full.description;
    return { selection: `{ ${parts.join(' ')} }`, schema };
  }

  /**
   * A union or interface (docs/design/transports.md#graphql-abstract-types): `__typename`, the interface's own fields,
   * then one inline fragment per possible object type with its fields. A field name two members select with
   * different types would make the document invalid (fields in one selection set must merge), so such a field is
   * aliased `<field>_<Type>` in each member that has it; the output schema is `anyOf` one object per member, each
   * with its `__typename` as a `const`.
   */
  #abstractSelection(full: FullType, depth: number): SelectedOutput {
    const own = full.kind === 'INTERFACE' ? this.#fieldsOf(full, depth) : { parts: [], properties: {} };
    const members = (full.possibleTypes ?? [])
      .map((p) => this.type(p.name))
      .filter((t): t is FullType => t?.kind === 'OBJECT');
    // Response names selected with more than one type across the members (and the interface's own fields).
    const typesByName = new Map<string, Set<string>>();
    const note = (name: string, type: TypeRef) => {
      const seen = typesByName.get(name) ?? new Set<string>();
      seen.add(typeNotation(type));
      typesByName.set(name, seen);
    };
    for (const m of [full, ...members]) for (const f of m.fields ?? []) note(f.name, f.type);
    const clashes = new Set([...typesByName].filter(([, types]) => types.size > 1).map(([name]) => name));
    const ownNames = new Set(Object.keys(own.properties));
    const fragments: string[] = [];
    const branches: JsonSchema[] = [];
    for (const member of members) {
      const { parts, properties } = this.#fieldsOf(member, depth);
      const selected: string[] = [];
      const memberProps: Record<string, JsonSchema> = { __typename: { const: member.name } };
      parts.forEach((part) => {
        const name = part.split(' ', 1)[0];
        if (ownNames.has(name) && !clashes.has(name)) {
          memberProps[name] = properties[name];
          return;
        }
        const key = clashes.has(name) ? `${name}_${member.name}` : name;
        selected.push(key === name ? part : `${key}: ${part}`);
        memberProps[key] = properties[name];
      });
      for (const [name, schema] of Object.entries(own.properties))
        if (!(name in memberProps)) memberProps[name] = schema;
      if (selected.length > 0) fragments.push(`... on ${member.name} { ${selected.join(' ')} }`);
      const branch: JsonSchema = { type: 'object', properties: memberProps };
      if (member.description) branch.description = member.description;
      branches.push(branch);
    }
    const ownParts = own.parts.filter((p) => !clashes.has(p.split(' ', 1)[0]));
    const schema: JsonSchema =
      branches.length > 0
        ? { anyOf: branches }
        : { type: 'object', properties: { __typename: { type: 'string' }, ...own.properties } };
    if (full.description) schema.description = full.description;
    return { selection: `{ __typename ${[...ownParts, ...fragments].join(' ')} }`.replace('  }', ' }'), schema };
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
