/** Operation parameters → `inputs` properties (docs/design/openapi.md#parameters). */
import { collectObjectExamples, mergeExamples } from './merge-examples.js';
import type { OperationContext } from './operation-context.js';
import { derefObject, isPlainObject, own } from './ref-resolver.js';
import type { SchemaRoot } from './schema-expander.js';

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface InputParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  schema: unknown;
}

export interface CollectedParameters {
  /** Path, query, header and cookie parameters, clash-free, in document order. */
  params: InputParameter[];
  /** Swagger 2.0 `in: body` parameter. */
  bodyParam?: Record<string, unknown>;
  /** Swagger 2.0 `in: formData` parameters. */
  formParams: Record<string, unknown>[];
}

const PRIORITY: Record<ParameterLocation, number> = { path: 0, query: 1, header: 2, cookie: 3 };
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/** Swagger 2.0 non-body parameters carry their schema keywords on the parameter itself. */
const SWAGGER2_SCHEMA_KEYS = [
  'type', 'format', 'items', 'enum', 'default', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'pattern', 'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'x-nullable',
];

function swagger2Schema(p: Record<string, unknown>): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  for (const key of SWAGGER2_SCHEMA_KEYS) if (p[key] !== undefined) schema[key] = p[key];
  return schema;
}

/** The raw schema of a non-body parameter: `schema`, else the first `content` entry's, else 2.0 keywords. */
function rawParameterSchema(p: Record<string, unknown>): { schema: unknown; media?: Record<string, unknown> } {
  if (p.schema !== undefined) return { schema: p.schema };
  if (isPlainObject(p.content)) {
    const first = Object.keys(p.content)[0];
    const media = first === undefined ? undefined : p.content[first];
    if (isPlainObject(media)) return { schema: media.schema ?? {}, media };
  }
  return { schema: swagger2Schema(p) };
}

/**
 * Adds a description and examples to an expanded schema, on a copy (expanded schemas may be shared).
 * Non-object schemas (`true`) become `{}` first.
 */
export function decorateSchema(expanded: unknown, description: unknown, examples: unknown[]): unknown {
  const hasDescription = typeof description === 'string' && description !== '';
  if (!hasDescription && examples.length === 0) return isPlainObject(expanded) ? expanded : {};
  const out: Record<string, unknown> = isPlainObject(expanded) ? { ...expanded } : {};
  if (hasDescription) out.description = description;
  if (examples.length > 0) {
    const merged = mergeExamples(Array.isArray(out.examples) ? [...examples, ...out.examples] : examples);
    if (merged.length > 0) out.examples = merged;
  }
  return out;
}

/** The expanded property schema of one non-body parameter, with its description and examples. */
export function parameterSchema(p: Record<string, unknown>, ctx: OperationContext, root: SchemaRoot): unknown {
  const { schema, media } = rawParameterSchema(p);
  const examples = collectObjectExamples(p, ctx.resolver);
  if (media) examples.push(...collectObjectExamples(media, ctx.resolver));
  return decorateSchema(root.expand(schema), p.description, examples);
}

/** Merges path-item and operation parameters by (name, in), the operation's winning, and resolves clashes. */
export function collectParameters(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
  ctx: OperationContext,
  root: SchemaRoot,
): CollectedParameters {
  const byKey = new Map<string, Record<string, unknown>>();
  for (const list of [pathItem.parameters, op.parameters]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      ctx.drop('parameters', 'not an array');
      continue;
    }
    for (const entry of list) {
      const d = derefObject(entry, ctx.resolver);
      if (!d.value) {
        ctx.drop(`parameter ${describeRef(entry)}`, d.error);
        continue;
      }
      const p = d.value;
      if (typeof p.name !== 'string' || p.name === '' || typeof p.in !== 'string') {
        ctx.drop('parameter', 'no name or no "in"');
        continue;
      }
      byKey.set(`${p.in}\u0000${p.name}`, p);
    }
  }

  const out: CollectedParameters = { params: [], formParams: [] };
  const kept: Array<Record<string, unknown> & { name: string; in: ParameterLocation }> = [];
  const best = new Map<string, ParameterLocation>();
  for (const p of byKey.values()) {
    const name = p.name as string;
    const where = p.in as string;
    if (where === 'body') {
      if (out.bodyParam) ctx.drop(`body parameter ${name}`, 'a second body parameter');
      else out.bodyParam = p;
      continue;
    }
    if (where === 'formData') {
      out.formParams.push(p);
      continue;
    }
    if (!(where in PRIORITY)) {
      ctx.drop(`parameter ${name}`, `unsupported location "${where}"`);
      continue;
    }
    if (where === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) {
      ctx.drop(`header parameter ${name}`, 'ignored: Accept, Content-Type and Authorization are not parameters in OpenAPI');
      continue;
    }
    const loc = where as ParameterLocation;
    kept.push(p as Record<string, unknown> & { name: string; in: ParameterLocation });
    const prev = best.get(name);
    if (prev === undefined || PRIORITY[loc] < PRIORITY[prev]) best.set(name, loc);
  }

  for (const p of kept) {
    const winner = best.get(p.name)!;
    if (winner !== p.in) {
      ctx.drop(`${p.in} parameter ${p.name}`, `clashes with the ${winner} parameter of the same name`);
      continue;
    }
    out.params.push({
      name: p.name,
      in: p.in,
      required: p.in === 'path' || p.required === true,
      schema: parameterSchema(p, ctx, root),
    });
  }
  return out;
}

function describeRef(entry: unknown): string {
  const ref = own(entry, '$ref');
  return typeof ref === 'string' ? ref : '';
}

