/**
 * OpenAPI parameter serialisation (`style`/`explode`) for http templates: the extension field
 * `parameter_serialization` (docs/design/openapi.md#parameter-serialization). Other implementations ignore the field
 * and send their defaults; we build path segments, query strings, headers and cookies exactly as the OpenAPI
 * specification's style table shows (parameter `color`; `blue`; `[blue, black, brown]`; `{R: 100, G: 200, B: 150}`).
 */
import { argToText } from '../core/stringify.js';

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';
export type ParameterStyleName =
  | 'matrix'
  | 'label'
  | 'simple'
  | 'form'
  | 'spaceDelimited'
  | 'pipeDelimited'
  | 'deepObject';

/** One entry of `parameter_serialization`, keyed by the argument name. */
export interface ParameterSerialization {
  in: ParameterLocation;
  style?: ParameterStyleName;
  explode?: boolean;
  /**
   * The media type of a parameter declared with `content` instead of `schema` (docs/design/openapi.md#content-parameters):
   * the whole value is one text in that type (JSON for `application/json` and `+json`), never exploded into fields.
   */
  content_type?: string;
}

/** True for `application/json`, `+json` suffixes and parameters that name no usable type. */
function isJsonMedia(type: string): boolean {
  const t = type.split(';')[0].trim().toLowerCase();
  return t === 'application/json' || t.endsWith('+json') || t === '*/*' || t === '';
}

/** The single text of a `content` parameter: JSON text for JSON media, else the value as text. */
function contentText(value: unknown, contentType: string): string {
  if (isJsonMedia(contentType)) return JSON.stringify(value) ?? 'null';
  return text(value);
}

/** The OpenAPI defaults: `simple` for path and header, `form` for query and cookie; `explode` is true for `form` only. */
export function effectiveStyle(entry: ParameterSerialization): { style: ParameterStyleName; explode: boolean } {
  const style = entry.style ?? (entry.in === 'path' || entry.in === 'header' ? 'simple' : 'form');
  return { style, explode: entry.explode ?? style === 'form' };
}

/** Percent-encodes every byte except `A-Z a-z 0-9 - . _ ~` (values and names; delimiters stay literal). */
function enc(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

function text(value: unknown): string {
  return argToText(value) ?? '';
}

type Shape =
  | { kind: 'empty' }
  | { kind: 'primitive'; value: string }
  | { kind: 'array'; items: string[] }
  | { kind: 'object'; pairs: Array<[string, string]> };

function shape(value: unknown): Shape {
  if (value === null || value === undefined) return { kind: 'empty' };
  if (Array.isArray(value)) return value.length === 0 ? { kind: 'empty' } : { kind: 'array', items: value.map(text) };
  if (typeof value === 'object') {
    const pairs = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, text(v)] as [string, string]);
    return pairs.length === 0 ? { kind: 'empty' } : { kind: 'object', pairs };
  }
  return { kind: 'primitive', value: text(value) };
}

/** A path parameter, already percent-encoded (it replaces `{name}` as is). */
export function serializePath(name: string, value: unknown, entry: ParameterSerialization): string {
  if (entry.content_type !== undefined) return enc(contentText(value, entry.content_type));
  const { style, explode } = effectiveStyle(entry);
  const s = shape(value);
  const n = enc(name);
  switch (style) {
    case 'matrix':
      if (s.kind === 'empty') return `;${n}`;
      if (s.kind === 'primitive') return `;${n}=${enc(s.value)}`;
      if (s.kind === 'array')
        return explode ? s.items.map((i) => `;${n}=${enc(i)}`).join('') : `;${n}=${s.items.map(enc).join(',')}`;
      return explode
        ? s.pairs.map(([k, v]) => `;${enc(k)}=${enc(v)}`).join('')
        : `;${n}=${s.pairs.map(([k, v]) => `${enc(k)},${enc(v)}`).join(',')}`;
    case 'label':
      if (s.kind === 'empty') return '.';
      if (s.kind === 'primitive') return `.${enc(s.value)}`;
      if (s.kind === 'array')
        return explode ? s.items.map((i) => `.${enc(i)}`).join('') : `.${s.items.map(enc).join(',')}`;
      return explode
        ? s.pairs.map(([k, v]) => `.${enc(k)}=${enc(v)}`).join('')
        : `.${s.pairs.map(([k, v]) => `${enc(k)},${enc(v)}`).join(',')}`;
    default:
      return simple(s, explode, enc);
  }
}

function simple(s: Shape, explode: boolean, e: (t: string) => string): string {
  if (s.kind === 'empty') return '';
  if (s.kind === 'primitive') return e(s.value);
  if (s.kind === 'array') return s.items.map(e).join(',');
  return s.pairs.map(([k, v]) => (explode ? `${e(k)}=${e(v)}` : `${e(k)},${e(v)}`)).join(',');
}

/** Query-string parts (`k=v`, already encoded), in order; none when the value is absent. */
export function serializeQuery(name: string, value: unknown, entry: ParameterSerialization): string[] {
  if (value === undefined) return [];
  const n = enc(name);
  if (entry.content_type !== undefined) return [`${n}=${enc(contentText(value, entry.content_type))}`];
  const { style, explode } = effectiveStyle(entry);
  const s = shape(value);
  switch (style) {
    case 'spaceDelimited':
    case 'pipeDelimited': {
      const sep = style === 'spaceDelimited' ? '%20' : '|';
      if (s.kind === 'array' && !explode) return [`${n}=${s.items.map(enc).join(sep)}`];
      if (s.kind === 'object' && !explode)
        return [`${n}=${s.pairs.map(([k, v]) => `${enc(k)}${sep}${enc(v)}`).join(sep)}`];
      return formParts(n, s, explode);
    }
    case 'deepObject':
      if (s.kind === 'object') return s.pairs.map(([k, v]) => `${n}[${enc(k)}]=${enc(v)}`);
      return formParts(n, s, true);
    default:
      return formParts(n, s, explode);
  }
}

function formParts(n: string, s: Shape, explode: boolean): string[] {
  if (s.kind === 'empty') return [`${n}=`];
  if (s.kind === 'primitive') return [`${n}=${enc(s.value)}`];
  if (s.kind === 'array')
    return explode ? s.items.map((i) => `${n}=${enc(i)}`) : [`${n}=${s.items.map(enc).join(',')}`];
  return explode
    ? s.pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`)
    : [`${n}=${s.pairs.map(([k, v]) => `${enc(k)},${enc(v)}`).join(',')}`];
}

/** A header value (`simple`; no percent-encoding), or undefined when absent. */
export function serializeHeader(value: unknown, entry: ParameterSerialization): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (entry.content_type !== undefined) return contentText(value, entry.content_type);
  return simple(shape(value), effectiveStyle(entry).explode, (t) => t);
}

/** Cookie pairs (`form`): explode → one pair per item/property, else one comma-joined pair. */
export function serializeCookie(name: string, value: unknown, entry: ParameterSerialization): Array<[string, string]> {
  if (value === undefined || value === null) return [];
  // A JSON text holds `;`, `,` and quotes, which a cookie value cannot: it is percent-encoded there.
  if (entry.content_type !== undefined) return [[name, enc(contentText(value, entry.content_type))]];
  const { explode } = effectiveStyle(entry);
  const s = shape(value);
  if (s.kind === 'empty') return [[name, '']];
  if (s.kind === 'primitive') return [[name, s.value]];
  if (s.kind === 'array') return explode ? s.items.map((i) => [name, i]) : [[name, s.items.join(',')]];
  return explode ? s.pairs : [[name, s.pairs.map(([k, v]) => `${k},${v}`).join(',')]];
}

/** The `parameter_serialization` entries of a template, validated loosely (unknown shapes are ignored). */
export function readParameterSerialization(value: unknown): Map<string, ParameterSerialization> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out = new Map<string, ParameterSerialization>();
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const e = raw as Record<string, unknown>;
    if (e.in !== 'path' && e.in !== 'query' && e.in !== 'header' && e.in !== 'cookie') continue;
    out.set(name, {
      in: e.in,
      ...(typeof e.style === 'string' ? { style: e.style as ParameterStyleName } : {}),
      ...(typeof e.explode === 'boolean' ? { explode: e.explode } : {}),
      ...(typeof e.content_type === 'string' ? { content_type: e.content_type } : {}),
    });
  }
  return out.size > 0 ? out : undefined;
}
