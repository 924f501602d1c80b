/** The introspection document sent at discovery (docs/design/transports.md#graphql), with its result types. */
export const INTROSPECTION_QUERY = `query UtcpIntrospection { __schema {
  queryType { name } mutationType { name } subscriptionType { name }
  types { kind name description
    fields(includeDeprecated: false) { name description type { ...T }
      args { name description defaultValue type { ...T } } }
    inputFields { name description defaultValue type { ...T } }
    enumValues(includeDeprecated: false) { name } possibleTypes { name } } } }
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`;

export type TypeKind = 'SCALAR' | 'OBJECT' | 'INTERFACE' | 'UNION' | 'ENUM' | 'INPUT_OBJECT' | 'LIST' | 'NON_NULL';

export interface TypeRef {
  kind: TypeKind;
  name: string | null;
  ofType?: TypeRef | null;
}

export interface InputValue {
  name: string;
  description?: string | null;
  /** A GraphQL literal (e.g. `10`, `"x"`, `RED`), or null. */
  defaultValue?: string | null;
  type: TypeRef;
}

export interface FieldInfo {
  name: string;
  description?: string | null;
  type: TypeRef;
  args?: InputValue[] | null;
}

export interface FullType {
  kind: TypeKind;
  name: string;
  description?: string | null;
  fields?: FieldInfo[] | null;
  inputFields?: InputValue[] | null;
  enumValues?: Array<{ name: string }> | null;
  /** The object types of a UNION or INTERFACE. */
  possibleTypes?: Array<{ name: string }> | null;
}

export interface IntrospectionSchema {
  queryType?: { name: string } | null;
  mutationType?: { name: string } | null;
  subscriptionType?: { name: string } | null;
  types: FullType[];
}
