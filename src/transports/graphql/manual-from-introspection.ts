import { UtcpError } from '../../core/errors.js';
import type { JsonSchema } from '../../core/types.js';
import type { GraphqlCallTemplate } from './template.js';
import { buildDocument, type OperationType } from './graphql-document.js';
import { GraphqlSchemaMapper, typeNotation } from './graphql-schema-mapper.js';
import type { FieldInfo, InputValue, IntrospectionSchema } from './introspection-query.js';
import type { GraphqlParser } from './load-modules.js';

export interface GeneratedTool {
  name: string;
  description: string;
  inputs: JsonSchema;
  outputs: JsonSchema;
  tags: string[];
  tool_call_template: GraphqlCallTemplate;
}

const ROOTS: ReadonlyArray<[OperationType, 'queryType' | 'mutationType' | 'subscriptionType']> = [
  ['query', 'queryType'],
  ['mutation', 'mutationType'],
  ['subscription', 'subscriptionType'],
];

/** Declared variable type: an argument with a default is declared nullable so it can be omitted. */
function declaredType(arg: InputValue): string {
  const hasDefault = arg.defaultValue !== null && arg.defaultValue !== undefined;
  return typeNotation(hasDefault && arg.type.kind === 'NON_NULL' && arg.type.ofType ? arg.type.ofType : arg.type);
}

/** Checks the `__schema` object enough to walk it safely. @throws UtcpError PROTOCOL_ERROR */
export function assertIntrospectionSchema(value: unknown): asserts value is IntrospectionSchema {
  const types = (value as IntrospectionSchema | null)?.types;
  if (typeof value !== 'object' || value === null || !Array.isArray(types)) {
    throw new UtcpError('PROTOCOL_ERROR', 'GraphQL introspection returned no __schema.types');
  }
}

/**
 * Turns an introspected schema into tools: one per root field of the query, mutation and
 * subscription types, with argument schemas, selected outputs and generated documents (docs/design/transports.md#graphql).
 * `raw` is the unsubstituted manual template; a `query` it carries is kept in every tool.
 */
export function toolsFromIntrospection(
  schema: IntrospectionSchema,
  raw: GraphqlCallTemplate,
  parser: GraphqlParser,
): { tools: GeneratedTool[]; warnings: string[] } {
  const mapper = new GraphqlSchemaMapper(schema.types, parser);
  const tools: GeneratedTool[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  const userQuery = typeof raw.query === 'string' && raw.query.trim() !== '' ? raw.query : undefined;
  for (const [op, key] of ROOTS) {
    const rootName = schema[key]?.name;
    if (!rootName) continue;
    const root = mapper.type(rootName);
    if (!root) {
      warnings.push(`GraphQL schema names ${op} type ${rootName} but does not define it`);
      continue;
    }
    for (const field of root.fields ?? []) {
      if (seen.has(field.name)) {
        warnings.push(`GraphQL ${op} field ${field.name} has the same name as an earlier root field; skipped`);
        continue;
      }
      seen.add(field.name);
      tools.push(toolFor(field, op, mapper, raw, userQuery));
    }
  }
  return { tools, warnings };
}

function toolFor(
  field: FieldInfo,
  op: OperationType,
  mapper: GraphqlSchemaMapper,
  raw: GraphqlCallTemplate,
  userQuery: string | undefined,
): GeneratedTool {
  const args = field.args ?? [];
  const variableTypes: Record<string, string> = {};
  for (const arg of args) variableTypes[arg.name] = declaredType(arg);
  const output = mapper.outputFor(field);
  return {
    name: field.name,
    description: field.description ?? '',
    inputs: mapper.inputsFor(args),
    outputs: output.schema,
    tags: [op],
    tool_call_template: {
      ...raw,
      operation_type: op,
      variable_types: variableTypes,
      query: userQuery ?? buildDocument(op, field.name, variableTypes, output.selection),
    },
  };
}
