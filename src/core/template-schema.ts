/**
 * Schema builders for transport templates (TypeBox, so each builder gives both the JSON Schema and the TypeScript
 * type). Only template modules import this file, and they are loaded on first use, so `import 'utcp-kit'` never
 * loads TypeBox. Conventions, matching the validator's messages (core/template-validator.ts):
 * `optional(x)` = may be absent or null; `nonEmpty()` = a string with a non-space character.
 */
import type {
  SchemaOptions,
  Static,
  TArray,
  TBoolean,
  TInteger,
  TNull,
  TNumber,
  TObject,
  TOptional,
  TProperties,
  TRecord,
  TSchema,
  TString,
  TUnsafe,
} from './schema-types.js';
import type { Auth, JsonObject } from './types.js';

/** Marks a property built with `Type.Optional` (left out of the object's `required`). */
const OPTIONAL = Symbol('utcp-kit.optional');

/**
 * The TypeBox builders the templates use, with TypeBox's own types (type-only import, erased at run time) and
 * a few lines of run-time code that produce the same JSON Schema. Importing TypeBox itself loads about a hundred
 * modules: measured 150–400 ms in a fresh process, most of a cold first registration, for builders that only
 * assemble constant objects. test/core/template-schemas.test.ts checks every schema against the meta-schema.
 */
export const Type = {
  String: (options?: SchemaOptions & { pattern?: string; minLength?: number; maxLength?: number }): TString =>
    ({ ...options, type: 'string' }) as TString,
  Number: (options?: SchemaOptions & { minimum?: number; maximum?: number }): TNumber =>
    ({ ...options, type: 'number' }) as TNumber,
  Integer: (options?: SchemaOptions & { minimum?: number; maximum?: number }): TInteger =>
    ({ ...options, type: 'integer' }) as TInteger,
  Boolean: (options?: SchemaOptions): TBoolean => ({ ...options, type: 'boolean' }) as TBoolean,
  Null: (options?: SchemaOptions): TNull => ({ ...options, type: 'null' }) as TNull,
  Array: <T extends TSchema>(items: T, options?: SchemaOptions & { minItems?: number; maxItems?: number }): TArray<T> =>
    ({ ...options, type: 'array', items }) as unknown as TArray<T>,
  /** String keys only (the one form the templates use). */
  Record: <V extends TSchema>(_key: TString, value: V, options?: SchemaOptions): TRecord<TString, V> =>
    ({ ...options, type: 'object', patternProperties: { '^(.*)$': value } }) as unknown as TRecord<TString, V>,
  Object: <T extends TProperties>(properties: T, options?: SchemaOptions): TObject<T> => {
    const required = Object.keys(properties).filter((k) => !(properties[k] as { [OPTIONAL]?: true })[OPTIONAL]);
    return {
      ...options,
      type: 'object',
      ...(required.length > 0 ? { required } : {}),
      properties,
    } as unknown as TObject<T>;
  },
  Optional: <T extends TSchema>(schema: T): TOptional<T> =>
    Object.defineProperty({ ...schema }, OPTIONAL, { value: true, enumerable: false }) as unknown as TOptional<T>,
  Unsafe: <T>(schema: Record<string, unknown> = {}): TUnsafe<T> => ({ ...schema }) as unknown as TUnsafe<T>,
};
export { defineCallTemplate } from './template.js';

/** Marks a property checked as an auth object by core (validate.ts#validateAuth). */
export const AUTH_FIELD = 'x-utcp-auth';

/** Absent or null allowed. */
export function optional<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  const types = Array.isArray(type) ? [...type, 'null'] : typeof type === 'string' ? [type, 'null'] : undefined;
  const values = (schema as { enum?: unknown[] }).enum;
  const nullable = Type.Unsafe<Static<T> | null>({
    ...schema,
    ...(types ? { type: types } : {}),
    ...(values ? { enum: [...values, null] } : {}),
  });
  return Type.Optional(nullable);
}

/** A string with at least one non-space character. */
export const nonEmpty = () => Type.String({ pattern: '\\S' });

/** One of the given strings (or numbers). */
export function oneOf<const V extends readonly (string | number)[]>(values: V) {
  const type = values.every((v) => typeof v === 'string')
    ? 'string'
    : values.every((v) => Number.isInteger(v))
      ? 'integer'
      : 'number';
  return Type.Unsafe<V[number]>({ type, enum: [...values] });
}

/** An object whose values are all strings (headers, env vars, ...). */
export const stringMap = () =>
  Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } });

/** An array of strings. */
export const stringList = () => Type.Array(Type.String());

/** An auth object (checked by core, by `auth_type`). */
export const authField = () => Type.Unsafe<Auth>({ [AUTH_FIELD]: true });

/** A TCP/UDP port. */
export const port = () => Type.Integer({ minimum: 0, maximum: 65535 });

/** A string or an object (discovery messages). */
export const stringOrObject = () => Type.Unsafe<string | JsonObject>({ type: ['string', 'object'] });

/** `auth` must be absent or null for this type. */
export const noAuth = () => Type.Optional(Type.Null());

/** Any JSON value with a documented TypeScript type; not checked beyond being present when required. */
export const anyOf = <T>() => Type.Unsafe<T>({});
