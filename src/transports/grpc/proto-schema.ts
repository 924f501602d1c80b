import type { Enum, Field, MapField, Type } from 'protobufjs';
import type { JsonSchema } from '../../core/types.js';

const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED = new Set(['uint32', 'fixed32', 'uint64', 'fixed64']);

/** Wrapper messages (google.protobuf.*Value) and the scalar they wrap. */
export const WRAPPERS: Readonly<Record<string, string>> = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};

/** Full name without the leading dot, e.g. `demo.v1.Req`. */
export function typeName(type: { fullName: string }): string {
  return type.fullName.replace(/^\./, '');
}

export function isEnum(t: unknown): t is Enum {
  return typeof t === 'object' && t !== null && 'values' in t && !('fieldsArray' in t);
}

/** A map field: a protobufjs MapField (from .proto text) or a repeated map-entry message (from descriptors). */
export interface MapShape {
  keyType: string;
  valueType: string;
  valueResolved: Type | Enum | null;
  /** Set when the map arrives as a repeated `XEntry` message (server reflection): values travel as `[{key, value}]`. */
  entry?: Type;
}

/** Recognises map fields in both forms protobufjs produces. */
export function mapShape(field: Field): MapShape | undefined {
  if (field.map) {
    const map = field as unknown as MapField;
    return { keyType: map.keyType, valueType: map.type, valueResolved: map.resolvedType };
  }
  const resolved = field.resolvedType;
  if (!field.repeated || !resolved || isEnum(resolved)) return undefined;
  const options = (resolved as Type).options as Record<string, unknown> | undefined;
  if (options?.map_entry !== true && options?.mapEntry !== true) return undefined;
  const { key, value } = (resolved as Type).fields;
  if (!key || !value) return undefined;
  return { keyType: key.type, valueType: value.type, valueResolved: value.resolvedType, entry: resolved as Type };
}

export type SchemaDirection = 'input' | 'output';

/**
 * JSON Schemas for protobuf messages following the protobuf JSON mapping (docs/design/transports.md#grpc):
 * 64-bit integers as strings (numbers also accepted on input), bytes as base64, enums by name,
 * messages via `$defs`, maps as objects, and the well-known types by their JSON form.
 */
export class ProtoSchemaBuilder {
  readonly #defs: Record<string, JsonSchema> = {};
  readonly #direction: SchemaDirection;

  constructor(direction: SchemaDirection) {
    this.#direction = direction;
  }

  /** The schema of a whole message (the request or response), with `$defs` for nested messages. */
  root(type: Type): JsonSchema {
    // A response that is itself a well-known type has that type's JSON form, as it does in a field
    // (docs/design/transports.md#grpc-json): a Timestamp is an RFC 3339 string, not {seconds, nanos}.
    const special = this.#direction === 'output' ? this.#wellKnown(type) : undefined;
    if (special) return special;
    const schema = this.#messageBody(type);
    if (Object.keys(this.#defs).length > 0) schema.$defs = this.#defs;
    return schema;
  }

  #messageBody(type: Type): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of type.fieldsArray) {
      properties[field.name] = this.#field(field);
      if (field.required) required.push(field.name);
    }
    const schema: JsonSchema = { type: 'object', properties };
    if (required.length > 0) schema.required = required;
    if (type.comment) schema.description = type.comment;
    return schema;
  }

  #field(field: Field): JsonSchema {
    let schema: JsonSchema;
    const map = mapShape(field);
    if (map) {
      schema = { type: 'object', additionalProperties: this.#single(map.valueType, map.valueResolved) };
    } else if (field.repeated) {
      schema = { type: 'array', items: this.#single(field.type, field.resolvedType) };
    } else {
      schema = this.#single(field.type, field.resolvedType);
    }
    return field.comment ? { ...schema, description: field.comment } : schema;
  }

  #single(scalar: string, resolved: Type | Enum | null): JsonSchema {
    if (resolved && isEnum(resolved)) return { type: 'string', enum: Object.keys(resolved.values) };
    if (resolved) return this.#message(resolved as Type);
    return this.#scalar(scalar);
  }

  #scalar(type: string): JsonSchema {
    if (INT32.has(type)) return UNSIGNED.has(type) ? { type: 'integer', minimum: 0 } : { type: 'integer' };
    if (INT64.has(type)) {
      const pattern = UNSIGNED.has(type) ? '^[0-9]+$' : '^-?[0-9]+$';
      return this.#direction === 'input'
        ? { type: ['string', 'integer'], pattern, description: '64-bit integer as a decimal string' }
        : { type: 'string', pattern, description: '64-bit integer as a decimal string' };
    }
    if (type === 'double' || type === 'float') return { type: 'number' };
    if (type === 'bool') return { type: 'boolean' };
    if (type === 'bytes') return { type: 'string', contentEncoding: 'base64', description: 'base64-encoded bytes' };
    return { type: 'string' };
  }

  #message(type: Type): JsonSchema {
    const special = this.#wellKnown(type);
    if (special) return special;
    const name = typeName(type);
    if (!(name in this.#defs)) {
      this.#defs[name] = {}; // placeholder first: messages may refer to themselves
      this.#defs[name] = this.#messageBody(type);
    }
    return { $ref: `#/$defs/${name}` };
  }

  /** The schema of a well-known type's proto3 JSON form, or undefined for any other message. */
  #wellKnown(type: Type): JsonSchema | undefined {
    const name = typeName(type);
    switch (name) {
      case 'google.protobuf.Timestamp':
        return { type: 'string', description: 'RFC 3339 timestamp, e.g. 2024-01-01T00:00:00Z' };
      case 'google.protobuf.Duration':
        return { type: 'string', description: 'Duration in seconds with an "s" suffix, e.g. 1.5s' };
      case 'google.protobuf.Struct':
        return { type: 'object' };
      case 'google.protobuf.Value':
      case 'google.protobuf.Empty':
        return {};
      case 'google.protobuf.ListValue':
        return { type: 'array' };
      case 'google.protobuf.FieldMask':
        return { type: 'string', description: 'Comma-separated field paths' };
      case 'google.protobuf.Any':
        return { type: 'object', properties: { '@type': { type: 'string' } }, required: ['@type'] };
      default:
        return WRAPPERS[name] ? this.#scalar(WRAPPERS[name]) : undefined;
    }
  }
}
