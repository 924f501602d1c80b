import type { JsonObject, JsonSchema } from '../../index.js';
import { isSchemaObject, resolveLocalRef, toObjectRootSchema, typesOf } from '../export/schema-convert.js';

type Schema = Record<string, unknown>;

function deref(schema: Schema, root: Schema, depth = 0): Schema {
  if (typeof schema.$ref !== 'string' || depth > 16) return schema;
  const target = resolveLocalRef(schema.$ref, root);
  return target ? deref(target, root, depth + 1) : schema;
}

function acceptsNull(input: Schema, root: Schema, depth = 0): boolean {
  const schema = deref(input, root);
  if (depth > 16 || schema.nullable === true || schema.const === null) return true;
  if (Array.isArray(schema.enum)) return schema.enum.includes(null);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members)) return members.some((m) => isSchemaObject(m) && acceptsNull(m, root, depth + 1));
  }
  const types = typesOf(schema);
  if (types) return types.includes('null');
  return schema.const === undefined && schema.allOf === undefined && schema.not === undefined;
}

function clean(value: unknown, input: unknown, root: Schema, depth: number): unknown {
  if (!isSchemaObject(input) || depth > 32) return value;
  const schema = deref(input, root);
  if (Array.isArray(value))
    return isSchemaObject(schema.items) ? value.map((v) => clean(v, schema.items, root, depth + 1)) : value;
  if (!isSchemaObject(value) || !isSchemaObject(schema.properties)) return value;
  const properties = schema.properties;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const propertySchema = properties[key];
    if (v === null && isSchemaObject(propertySchema) && !acceptsNull(propertySchema, root)) continue;
    out[key] = clean(v, propertySchema, root, depth + 1);
  }
  return out;
}

/**
 * Removes the `null`s that OpenAI strict mode makes the model send for optional properties,
 * where the tool's own schema does not accept null, so the arguments validate against `inputs` again.
 */
export function dropStrictModeNulls(args: JsonObject, inputSchema: JsonSchema): JsonObject {
  const root = toObjectRootSchema(inputSchema);
  return clean(args, root, root, 0) as JsonObject;
}
