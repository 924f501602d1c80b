/** Operation parameters → `inputs` properties (docs/design/openapi.md#parameters). */
import { collectObjectExamples, mergeExamples } from './merge-examples.js';
import type { OperationContext } from './operation-context.js';
import { derefObject, own } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import type { SchemaRoot } from './schema-expander.js';

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface InputParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  schema: unknown;
  /** `style`/`explode` when written, or when the value is an array or object (docs/design/openapi.md#parameter-serialization). */
  serialization?:
    | { in: ParameterLocation; style: string; explode: boolean }
    | { in: ParameterLocation; content_type: string };
}

const STYLES_BY_LOCATION: Record<ParameterLocation, readonly string[]> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form'],
};

/** Swagger 2.0 `collectionFormat` → OAS 3 style/explode (csv is the 2.0 default). */
function fromCollectionFormat(format: unknown, where: ParameterLocation): { style: string; explode: boolean } | string {
  const f = format === undefined ? 'csv' : format;
  const base = where === 'path' || where === 'header' ? 'simple' : 'form';
  switch (f) {
    case 'csv':
      return { style: base, explode: false };
    case 'multi':
      return where === 'query' || where === 'cookie'
        ? { style: 'form', explode: true }
        : `collectionFormat multi is not allowed in ${where}`;
    case 'ssv':
      return where === 'query' ? { style: 'spaceDelimited', explode: false } : `collectionFormat ssv is only for query`;
    case 'pipes':
      return where === 'query'
        ? { style: 'pipeDelimited', explode: false }
        : `collectionFormat pipes is only for query`;
    default:
      return `collectionFormat ${String(f)} has no OpenAPI 3 style; sent as csv`;
  }
}

function rawType(schema: unknown, ctx: OperationContext): unknown {
  let node = schema;
  for (let hops = 0; hops < 8 && isPlainObject(node) && typeof node.$ref === 'string'; hops++)
    node = ctx.resolver.resolve(node.$ref);
  return isPlainObject(node) ? node.type : undefined;
}

/** The serialisation entry of one parameter, or undefined when the defaults of every implementation agree. */
function serializationOf(
  p: Record<string, unknown>,
  where: ParameterLocation,
  ctx: OperationContext,
): InputParameter['serialization'] {
  const raw = rawParameterSchema(p);
  // `content` instead of `schema`: one value in that media type, never style fields (docs/design/openapi.md#content-parameters).
  if (raw.contentType !== undefined) return { in: where, content_type: raw.contentType };
  const t = rawType(raw.schema, ctx);
  const structured =
    t === 'array' || t === 'object' || (Array.isArray(t) && (t.includes('array') || t.includes('object')));
  if (ctx.swagger2) {
    if (t !== 'array') return undefined;
    const mapped = fromCollectionFormat(p.collectionFormat, where);
    if (typeof mapped === 'string') {
      ctx.drop(`${where} parameter ${String(p.name)} collectionFormat`, mapped);
      return { in: where, style: where === 'path' || where === 'header' ? 'simple' : 'form', explode: false };
    }
    return { in: where, ...mapped };
  }
  if (p.style === undefined && p.explode === undefined && !structured) return undefined;
  let style = typeof p.style === 'string' ? p.style : where === 'path' || where === 'header' ? 'simple' : 'form';
  if (!STYLES_BY_LOCATION[where].includes(style)) {
    ctx.drop(`${where} parameter ${String(p.name)} style ${style}`, `not a ${where} style; the default is used`);
    style = STYLES_BY_LOCATION[where][0];
  }
  const explode = typeof p.explode === 'boolean' ? p.explode : style === 'form';
  return { in: where, style, explode };
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
  'type',
  'format',
  'items',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'x-nullable',
];

function swagger2Schema(p: Record<string, unknown>): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  for (const key of SWAGGER2_SCHEMA_KEYS) if (p[key] !== undefined) schema[key] = p[key];
  return schema;
}

/** The raw schema of a non-body parameter: `schema`, else the first `content` entry's, else 2.0 keywords. */
function rawParameterSchema(p: Record<string, unknown>): {
  schema: unknown;
  media?: Record<string, unknown>;
  contentType?: string;
} {
  if (p.schema !== undefined) return { schema: p.schema };
  if (isPlainObject(p.content)) {
    const first = Object.keys(p.content)[0];
    const media = first === undefined ? undefined : p.content[first];
    if (isPlainObject(media)) return { schema: media.schema ?? {}, media, contentType: first };
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
      ctx.drop(
        `header parameter ${name}`,
        'ignored: Accept, Content-Type and Authorization are not parameters in OpenAPI',
      );
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
    const serialization = serializationOf(p, p.in, ctx);
    out.params.push({
      name: p.name,
      in: p.in,
      required: p.in === 'path' || p.required === true,
      schema: parameterSchema(p, ctx, root),
      ...(serialization ? { serialization } : {}),
    });
  }
  return out;
}

function describeRef(entry: unknown): string {
  const ref = own(entry, '$ref');
  return typeof ref === 'string' ? ref : '';
}
