/** Request bodies (docs/design/openapi.md#request-bodies): OAS 3 `requestBody`, Swagger 2.0 `in: body` and `in: formData`. */
import { collectObjectExamples } from './merge-examples.js';
import { baseMediaType, isJsonLike, type OperationContext } from './operation-context.js';
import { decorateSchema, parameterSchema } from './collect-parameters.js';
import { derefObject, setOwn } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import type { SchemaRoot } from './schema-expander.js';

export interface RequestBody {
  schema: unknown;
  required: boolean;
  contentType: string;
  /** Multipart properties that are files (`format: binary`, or arrays of them): docs/design/openapi.md#files. */
  fileFields?: string[];
  /** The body is raw bytes (a binary media type with a binary or open schema), passed as base64. */
  binary?: boolean;
}

/** `type: string, format: binary` (or Swagger 2.0 `type: file`) after resolving a `$ref`. */
function isBinaryString(schema: unknown, ctx: OperationContext): boolean {
  const s = derefObject(schema, ctx.resolver).value;
  return !!s && (s.type === 'file' || (s.type === 'string' && s.format === 'binary'));
}

/** The names of the multipart schema's properties that are files or arrays of files. */
function fileFieldsOf(schema: unknown, ctx: OperationContext): string[] {
  const s = derefObject(schema, ctx.resolver).value;
  if (!s || !isPlainObject(s.properties)) return [];
  const out: string[] = [];
  for (const [name, raw] of Object.entries(s.properties)) {
    const p = derefObject(raw, ctx.resolver).value;
    if (!p) continue;
    if (isBinaryString(p, ctx) || (p.type === 'array' && isBinaryString(p.items, ctx))) out.push(name);
  }
  return out;
}

/** A media type whose body is bytes, not text: anything but JSON, forms, `text/*` and XML. */
function isBinaryMedia(mediaType: string): boolean {
  const t = baseMediaType(mediaType);
  if (isJsonLike(mediaType) || t === '*/*' || t.startsWith('text/')) return false;
  if (t === 'application/x-www-form-urlencoded' || t === 'multipart/form-data') return false;
  return !t.endsWith('+xml') && t !== 'application/xml';
}

function mediaRank(mediaType: string): number {
  if (isJsonLike(mediaType)) return 0;
  switch (baseMediaType(mediaType)) {
    case 'application/x-www-form-urlencoded':
      return 1;
    case 'multipart/form-data':
      return 2;
    case 'text/plain':
      return 3;
    case 'application/octet-stream':
      return 4;
    default:
      return 5;
  }
}

/** JSON > form > multipart > text > octet-stream > first listed; ties go to the first listed. */
export function chooseMediaType(mediaTypes: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestRank = Infinity;
  for (const m of mediaTypes) {
    const r = mediaRank(m);
    if (r < bestRank) {
      best = m;
      bestRank = r;
    }
  }
  return best;
}

/** The `content_type` for a chosen media type: `*\/*` means JSON. */
function contentTypeFor(mediaType: string): string {
  return baseMediaType(mediaType) === '*/*' ? 'application/json' : mediaType;
}

/** OAS 3 `requestBody` (a `$ref` to `components/requestBodies` resolved). */
export function oas3RequestBody(
  op: Record<string, unknown>,
  ctx: OperationContext,
  root: SchemaRoot,
): RequestBody | undefined {
  if (op.requestBody === undefined) return undefined;
  const d = derefObject(op.requestBody, ctx.resolver);
  if (!d.value) {
    ctx.drop('requestBody', `${d.error}; the body is accepted as any JSON value`);
    return { schema: {}, required: false, contentType: 'application/json' };
  }
  const body = d.value;
  const content = isPlainObject(body.content) ? body.content : {};
  const chosen = chooseMediaType(Object.keys(content));
  if (chosen === undefined) {
    return {
      schema: decorateSchema({}, body.description, []),
      required: body.required === true,
      contentType: 'application/json',
    };
  }
  const media = isPlainObject(content[chosen]) ? (content[chosen] as Record<string, unknown>) : {};
  const schema = root.expand(media.schema ?? {});
  const out: RequestBody = {
    schema: decorateSchema(schema, body.description, collectObjectExamples(media, ctx.resolver)),
    required: body.required === true,
    contentType: contentTypeFor(chosen),
  };
  if (baseMediaType(chosen) === 'multipart/form-data') {
    const files = fileFieldsOf(media.schema, ctx);
    if (files.length > 0) out.fileFields = files;
  } else if (
    isBinaryMedia(chosen) &&
    (media.schema === undefined ||
      isBinaryString(media.schema, ctx) ||
      Object.keys(derefObject(media.schema, ctx.resolver).value ?? {}).length === 0)
  ) {
    out.binary = true;
  }
  return out;
}

function consumesOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((c): c is string => typeof c === 'string') : [];
}

/** Swagger 2.0 `in: body` parameter, or the `in: formData` parameters as one object. */
export function swagger2RequestBody(
  bodyParam: Record<string, unknown> | undefined,
  formParams: readonly Record<string, unknown>[],
  op: Record<string, unknown>,
  ctx: OperationContext,
  root: SchemaRoot,
): RequestBody | undefined {
  const opConsumes = consumesOf(op.consumes);
  const rootConsumes = consumesOf(ctx.doc.consumes);
  if (bodyParam) {
    for (const p of formParams)
      ctx.drop(`formData parameter ${String(p.name)}`, 'the operation also has a body parameter');
    const json = opConsumes.find(isJsonLike) ?? rootConsumes.find(isJsonLike);
    return {
      schema: decorateSchema(root.expand(bodyParam.schema ?? {}), bodyParam.description, []),
      required: bodyParam.required === true,
      contentType: json ? contentTypeFor(json) : 'application/json',
    };
  }
  if (formParams.length === 0) return undefined;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  let hasFile = false;
  const fileFields: string[] = [];
  for (const p of formParams) {
    const name = p.name as string;
    if (p.type === 'file') {
      hasFile = true;
      fileFields.push(name);
    }
    setOwn(properties, name, parameterSchema(p, ctx, root));
    if (p.required === true) required.push(name);
  }
  const consumes = op.consumes !== undefined ? opConsumes : rootConsumes;
  const onlyMultipart = consumes.length > 0 && consumes.every((c) => baseMediaType(c) === 'multipart/form-data');
  const schema: Record<string, unknown> = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return {
    schema,
    required: required.length > 0,
    contentType: hasFile || onlyMultipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
    ...(fileFields.length > 0 ? { fileFields } : {}),
  };
}
