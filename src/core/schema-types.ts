/**
 * The TypeScript side of the template schema builders (template-schema.ts): each schema type carries, as a phantom
 * `static` property that never exists at run time, the type of the values it accepts, and `Static<S>` reads it.
 * The names and shapes follow TypeBox's, which the builders once wrapped; they live here so the published
 * declarations need no TypeBox (docs/design/packaging.md#typebox). Types only: this module emits no code.
 */

/** Keywords any schema may carry. */
export interface SchemaOptions {
  title?: string;
  description?: string;
  default?: unknown;
  examples?: unknown;
  [keyword: string]: unknown;
}

/** A JSON Schema whose accepted values have the TypeScript type `static` (phantom). */
export interface TSchema extends SchemaOptions {
  readonly static: unknown;
}

/** The TypeScript type of the values `S` accepts. */
export type Static<S extends TSchema> = S['static'];

export interface TString extends TSchema {
  readonly static: string;
  type: 'string';
}

export interface TNumber extends TSchema {
  readonly static: number;
  type: 'number';
}

export interface TInteger extends TSchema {
  readonly static: number;
  type: 'integer';
}

export interface TBoolean extends TSchema {
  readonly static: boolean;
  type: 'boolean';
}

export interface TNull extends TSchema {
  readonly static: null;
  type: 'null';
}

export interface TArray<T extends TSchema = TSchema> extends TSchema {
  readonly static: Static<T>[];
  type: 'array';
  items: T;
}

/** An object with string keys whose values all match `V` (the key schema only documents the key type). */
export interface TRecord<_K extends TString = TString, V extends TSchema = TSchema> extends TSchema {
  readonly static: Record<string, Static<V>>;
  type: 'object';
  patternProperties: Record<string, V>;
}

/** Any schema, typed by hand. */
export interface TUnsafe<T> extends TSchema {
  readonly static: T;
}

/** A property schema that may be absent from its object (left out of `required`). */
export type TOptional<T extends TSchema> = T & { readonly '~optional': true };

export type TProperties = Record<string, TSchema>;

type OptionalKeys<P extends TProperties> = {
  [K in keyof P]: P[K] extends { readonly '~optional': true } ? K : never;
}[keyof P];

type Flatten<T> = { [K in keyof T]: T[K] };

type ObjectStatic<P extends TProperties> = Flatten<
  { [K in Exclude<keyof P, OptionalKeys<P>>]: Static<P[K]> } & { [K in OptionalKeys<P>]?: Static<P[K]> }
>;

export interface TObject<P extends TProperties = TProperties> extends TSchema {
  readonly static: ObjectStatic<P>;
  type: 'object';
  properties: P;
  required?: string[];
}
