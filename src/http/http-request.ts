import { decodeBase64, encodeMultipart } from './http-files.js';
import { isPlainObject } from '../core/guards.js';
import { asSignal, type AbortSource } from '../core/deadline.js';
import { UtcpError } from '../core/errors.js';
import { argToText } from '../core/stringify.js';
import type { TransportContext } from '../core/transport.js';
import type { Auth, JsonObject } from '../core/types.js';
import { assertHeaderSafe, assertUrlAllowed } from '../core/url-policy.js';
import { assertCookieSafe, resolveAuth, type AuthMaterial } from './auth.js';
import {
  type ParameterSerialization,
  readParameterSerialization,
  serializeCookie,
  serializeHeader,
  serializePath,
  serializeQuery,
} from './parameter-styles.js';

/** A request ready to send: URL checked by the URL policy, headers checked for CR/LF. */
export interface HttpRequestSpec {
  url: URL;
  method: string;
  /** Header names in their configured case; one entry per case-insensitive name. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Header names set by the auth object (stripped on cross-origin redirects). */
  authHeaderNames: string[];
}

/** The request-shaping fields shared by http, sse and streamable_http templates. */
export interface HttpRequestTemplate {
  url: string;
  headers?: Record<string, string> | null;
  body_field?: string | null;
  header_fields?: string[] | null;
  cookie_fields?: string[] | null;
  auth?: Auth | null;
  /** *ext.* OpenAPI `style`/`explode` per argument (docs/design/openapi.md#parameter-serialization). */
  parameter_serialization?: Record<string, unknown> | null;
  /** *ext.* Multipart properties that are files (docs/design/transports.md#http-files). */
  file_fields?: string[] | null;
  /** *ext.* `"base64"`: the body argument holds the body's bytes. */
  body_encoding?: string | null;
}

export interface BuildHttpRequestOptions {
  method: string | ((hasBody: boolean) => string);
  /** Body Content-Type when no header sets one. */
  contentType: string;
  /** The template's `body_field`, or this default when the key is absent (http: "body"; sse/streamable: null). */
  defaultBodyField: string | null;
  /** URL-policy context. @default "tool invocation" */
  context?: string;
  signal: AbortSource;
  /** The tool comes from a remote-sourced manual: its OAuth2 token request goes through the dial guard. */
  remoteSource?: boolean;
  /** The tool's `inputs`: a body argument its schema declares a string is sent as a JSON string, never re-read as JSON. */
  inputs?: unknown;
}

/** True when `schema` admits only strings (`type: "string"`, `["string"]`, a string `const` or string `enum`). */
function declaresString(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  if (s.type === 'string') return true;
  if (Array.isArray(s.type)) return s.type.length > 0 && s.type.every((t) => t === 'string');
  if (typeof s.const === 'string') return true;
  return Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => typeof v === 'string');
}

/** The schema of the body argument in a tool's `inputs`, if it names one. */
function bodyArgumentSchema(inputs: unknown, field: string): unknown {
  const properties = (inputs as { properties?: unknown } | null | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null || !Object.hasOwn(properties, field)) return undefined;
  return (properties as Record<string, unknown>)[field];
}

/** Percent-encodes every byte except `A-Z a-z 0-9 - . _ ~` (docs/design/transports.md#http-path). */
export function encodeStrict(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Case-insensitive header map that remembers the configured spelling of each name. */
export class HeaderBag {
  readonly #map = new Map<string, [string, string]>();
  set(name: string, value: string): void {
    assertHeaderSafe(name, value);
    this.#map.set(name.toLowerCase(), [name, value]);
  }
  get(name: string): string | undefined {
    return this.#map.get(name.toLowerCase())?.[1];
  }
  /** The stored spelling of a header name, or `fallback` when absent. */
  nameOf(name: string, fallback = name): string {
    return this.#map.get(name.toLowerCase())?.[0] ?? fallback;
  }
  delete(name: string): void {
    this.#map.delete(name.toLowerCase());
  }
  toObject(): Record<string, string> {
    return Object.fromEntries(this.#map.values());
  }
}

/** An object of form fields (not bytes). */
function isFieldObject(v: unknown): v is Record<string, unknown> {
  return isPlainObject(v) && !(v instanceof Uint8Array);
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Encodes a body by effective Content-Type (docs/design/transports.md#http-body). A string for a JSON type is sent
 * as it is when it is JSON text (a caller that serialised its object), unless `stringValue` says the schema declares
 * a string: then the text is the value, and `"true"` goes out as the JSON string `"true"`, not the boolean.
 * @returns the bytes/text and the Content-Type to send (multipart gets its generated boundary).
 */
export function encodeBody(
  body: unknown,
  contentType: string,
  stringValue = false,
  bytes: { fileFields?: readonly string[]; base64?: boolean } = {},
): { body: string | Uint8Array; contentType: string } {
  const type = contentType.toLowerCase();
  // Bytes (docs/design/transports.md#http-files): a raw body given as base64, or multipart file parts.
  if (bytes.base64 && (typeof body === 'string' || body instanceof Uint8Array))
    return { body: typeof body === 'string' ? decodeBase64(body, 'The body argument') : body, contentType };

  if (type.includes('json')) {
    if (typeof body === 'string' && !stringValue && isJsonText(body)) return { body, contentType };
    return { body: JSON.stringify(body), contentType };
  }
  if (type.startsWith('application/x-www-form-urlencoded') && isFieldObject(body)) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) {
      const text = argToText(v);
      if (text !== undefined) params.append(k, text);
    }
    return { body: params.toString(), contentType };
  }
  // One part per property; the `file_fields` among them as file parts (docs/design/transports.md#http-files).
  if (type.startsWith('multipart/form-data') && isFieldObject(body))
    return encodeMultipart(body, new Set(bytes.fileFields ?? []));
  if (typeof body === 'string' || body instanceof Uint8Array) return { body, contentType };
  return { body: JSON.stringify(body), contentType };
}

const NO_AUTH: AuthMaterial = Object.freeze({
  headers: Object.freeze({}),
  query: Object.freeze([]),
  cookies: Object.freeze([]),
  authHeaderNames: Object.freeze([]),
}) as unknown as AuthMaterial;

/** Appends `key=value` pairs (strictly encoded) after any query already in the URL. */
export function appendQuery(url: URL, pairs: ReadonlyArray<[string, string]>): URL {
  if (pairs.length === 0) return url;
  const added = pairs.map(([k, v]) => `${encodeStrict(k)}=${encodeStrict(v)}`).join('&');
  const existing = url.search.length > 1 ? url.search.slice(1) + '&' : '';
  const out = new URL(url); // a copy: callers may still hold the original
  out.search = '?' + existing + added;
  return out;
}

/** Headers from static headers < extra < auth, with auth cookies and `cookies` merged into one Cookie header. */
export function mergeHeaders(
  staticHeaders: Record<string, string> | null | undefined,
  extra: ReadonlyArray<[string, string]>,
  auth: AuthMaterial,
  cookies: ReadonlyArray<[string, string]> = [],
): HeaderBag {
  const bag = new HeaderBag();
  for (const [k, v] of Object.entries(staticHeaders ?? {})) {
    if (typeof v !== 'string') throw new UtcpError('INVALID_MANUAL', `Header ${k} must have a string value`);
    bag.set(k, v);
  }
  for (const [k, v] of extra) bag.set(k, v);
  for (const [k, v] of Object.entries(auth.headers)) bag.set(k, v);
  const allCookies = [...cookies, ...auth.cookies];
  if (allCookies.length > 0) {
    const existing = bag.get('cookie');
    const joined = allCookies.map(([k, v]) => `${k}=${v}`).join('; ');
    bag.set(bag.nameOf('cookie', 'Cookie'), existing ? `${existing}; ${joined}` : joined);
  }
  return bag;
}

const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:[/?#]|$)/i;

function dotSegment(name: string): UtcpError {
  return new UtcpError(
    'INVALID_ARGUMENTS',
    `Path parameter ${name} may not be "." or "..": it would move the request to another path`,
  );
}

/** Refuses a substituted URL whose path gained a dot segment (e.g. from adjacent placeholders). */
function assertNoNewDotSegments(templateUrl: string, substituted: string): void {
  const pathOf = (url: string) => url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0];
  if (DOT_SEGMENT.test(pathOf(substituted)) && !DOT_SEGMENT.test(pathOf(templateUrl))) {
    throw new UtcpError(
      'INVALID_ARGUMENTS',
      'Path parameters may not form a "." or ".." path segment: it would move the request to another path',
    );
  }
}

/** What a template's request shape needs worked out once (templates are never mutated once stored). */
interface RequestPlan {
  styles: Map<string, ParameterSerialization> | undefined;
  /** Static headers, checked for CR/LF once. */
  staticHeaders: Record<string, string> | undefined;
  hasPlaceholders: boolean;
}

const plans = new WeakMap<HttpRequestTemplate, RequestPlan>();

function planFor(template: HttpRequestTemplate): RequestPlan {
  let plan = plans.get(template);
  if (plan) return plan;
  let staticHeaders: Record<string, string> | undefined;
  if (template.headers && Object.keys(template.headers).length > 0) {
    // Through a HeaderBag, as at merge time: checked for CR/LF, one entry per case-insensitive name.
    const bag = new HeaderBag();
    for (const [k, v] of Object.entries(template.headers)) {
      if (typeof v !== 'string') throw new UtcpError('INVALID_MANUAL', `Header ${k} must have a string value`);
      bag.set(k, v);
    }
    staticHeaders = bag.toObject();
  }
  plan = {
    styles: readParameterSerialization(template.parameter_serialization),
    staticHeaders,
    hasPlaceholders: template.url.includes('{'),
  };
  plans.set(template, plan);
  return plan;
}

/** `key=value` pairs, strictly encoded, joined with `&`. */
function encodePairs(pairs: ReadonlyArray<[string, string]>): string {
  let out = '';
  for (const [k, v] of pairs) out += `${out ? '&' : ''}${encodeStrict(k)}=${encodeStrict(v)}`;
  return out;
}

/**
 * Builds a tool request (docs/design/transports.md#http-call): header/cookie/body args, `{path}` placeholders,
 * URL policy, query string for every method (auth query last), merged headers, encoded body.
 * What depends only on the template (styles, static header checks) is worked out once per template.
 * @throws INVALID_ARGUMENTS on a missing path parameter, URL_POLICY, HEADER_INJECTION.
 */
export async function buildHttpRequest(
  template: HttpRequestTemplate,
  args: JsonObject,
  ctx: TransportContext,
  options: BuildHttpRequestOptions,
): Promise<HttpRequestSpec> {
  const plan = planFor(template);
  const { styles } = plan;
  /** Arguments placed in headers, cookies, the body or the path; the rest go to the query string. */
  const used = new Set<string>();
  const headerArgs: Array<[string, string]> = [];
  for (const name of template.header_fields ?? []) {
    if (!Object.hasOwn(args, name) || used.has(name)) continue;
    used.add(name);
    const style = styles?.get(name);
    const text = style ? serializeHeader(args[name], style) : argToText(args[name]);
    if (text === undefined) continue;
    assertHeaderSafe(name, text);
    headerArgs.push([name, text]);
  }
  const cookieArgs: Array<[string, string]> = [];
  for (const name of template.cookie_fields ?? []) {
    if (!Object.hasOwn(args, name) || used.has(name)) continue;
    used.add(name);
    const style = styles?.get(name);
    const pairs: Array<[string, string | undefined]> = style
      ? serializeCookie(name, args[name], style)
      : [[name, argToText(args[name])]];
    for (const [k, text] of pairs) {
      if (text === undefined) continue;
      assertCookieSafe(k, text);
      cookieArgs.push([k, text]);
    }
  }
  const bodyField = template.body_field === undefined ? options.defaultBodyField : template.body_field;
  let body: unknown;
  let stringBody = false;
  if (bodyField && Object.hasOwn(args, bodyField) && !used.has(bodyField)) {
    body = args[bodyField];
    used.add(bodyField);
    stringBody = typeof body === 'string' && declaresString(bodyArgumentSchema(options.inputs, bodyField));
  }
  const hasBody = body !== undefined && body !== null;

  let substituted = template.url;
  if (plan.hasPlaceholders) {
    // Placeholders see the arguments not already placed in headers, cookies or the body.
    const taken = new Set(used);
    substituted = template.url.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const value = taken.has(name) || !Object.hasOwn(args, name) ? undefined : args[name];
      const text = argToText(value);
      if (text === undefined) throw new UtcpError('INVALID_ARGUMENTS', `Missing required path parameter: ${name}`);
      used.add(name);
      const style = styles?.get(name);
      const encoded = style?.in === 'path' ? serializePath(name, value, style) : encodeStrict(text);
      // "." and ".." survive percent-encoding and would be resolved by the URL parser (docs/design/threat-model.md#path-dot-segments).
      if (encoded === '.' || encoded === '..') throw dotSegment(name);
      return encoded;
    });
    assertNoNewDotSegments(template.url, substituted);
  }
  const url = assertUrlAllowed(substituted, options.context ?? 'tool invocation');
  if (url.hash) url.hash = '';

  const query: Array<[string, string]> = [];
  let styledQuery = '';
  for (const k in args) {
    if (!Object.hasOwn(args, k) || used.has(k)) continue;
    const v = args[k];
    const style = styles?.get(k);
    if (style?.in === 'query') {
      for (const part of serializeQuery(k, v, style)) styledQuery += `${styledQuery ? '&' : ''}${part}`;
      continue;
    }
    if (Array.isArray(v)) {
      for (const item of v) {
        const text = argToText(item);
        if (text !== undefined) query.push([k, text]);
      }
      continue;
    }
    const text = argToText(v);
    if (text !== undefined) query.push([k, text]);
  }
  const auth = template.auth
    ? await resolveAuth(template.auth, ctx, asSignal(options.signal), options.remoteSource)
    : NO_AUTH;
  // The query string in one assignment: what the URL had, styled parameters, plain ones, then auth's.
  const added = [
    styledQuery,
    query.length > 0 ? encodePairs(query) : '',
    auth.query.length > 0 ? encodePairs(auth.query) : '',
  ]
    .filter(Boolean)
    .join('&');
  if (added) url.search = '?' + (url.search.length > 1 ? url.search.slice(1) + '&' : '') + added;

  const method = typeof options.method === 'function' ? options.method(hasBody) : options.method;
  const authHeaderCount = Object.keys(auth.headers).length;
  if (
    !hasBody &&
    headerArgs.length === 0 &&
    cookieArgs.length === 0 &&
    authHeaderCount === 0 &&
    auth.cookies.length === 0
  ) {
    // Nothing to merge: the template's static headers (already checked) as they are.
    return {
      url,
      method,
      headers: plan.staticHeaders ? { ...plan.staticHeaders } : {},
      body: undefined,
      authHeaderNames: auth.authHeaderNames,
    };
  }
  const headers = mergeHeaders(plan.staticHeaders, headerArgs, auth, cookieArgs);
  let encoded: string | Uint8Array | undefined;
  if (hasBody) {
    const effective = headers.get('content-type') ?? options.contentType;
    const result = encodeBody(body, effective, stringBody, {
      fileFields: template.file_fields ?? undefined,
      base64: template.body_encoding === 'base64',
    });
    encoded = result.body;
    if (headers.get('content-type') !== result.contentType)
      headers.set(headers.nameOf('content-type', 'Content-Type'), result.contentType);
  }
  return { url, method, headers: headers.toObject(), body: encoded, authHeaderNames: auth.authHeaderNames };
}
