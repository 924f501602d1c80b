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
  if (isUnreserved(text)) return text;
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** True when every character is `A-Z a-z 0-9 - . _ ~` (nothing to encode; checked without a regex or a copy). */
function isUnreserved(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (
      !(
        (c >= 97 && c <= 122) || // a-z
        (c >= 65 && c <= 90) || // A-Z
        (c >= 48 && c <= 57) || // 0-9
        c === 45 || // -
        c === 46 || // .
        c === 95 || // _
        c === 126 // ~
      )
    )
      return false;
  }
  return true;
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
  /**
   * A URL without placeholders, once it passed the URL policy (the policy depends on the URL alone): its href, fragment
   * dropped. Undefined until the first call; null when the URL has a fragment (such URLs take the full path).
   */
  checkedHref?: string | null;
  /** What joins the first added query parameter to `checkedHref`: `?`, `&`, or nothing after a bare `?`. */
  queryJoin?: string;
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

/**
 * Whether the request URL of a template without placeholders comes from its checked href
 * (docs/design/http-exchange.md#per-call-cost): the URL policy, which depends on the URL alone, runs on the template's
 * URL on the first call; later calls parse only the final URL. A refused URL throws here on every call, as before. A
 * URL with a fragment takes the full path every time.
 */
function checkStaticUrl(template: HttpRequestTemplate, plan: RequestPlan, context: string): boolean {
  if (plan.checkedHref === undefined) {
    const url = assertUrlAllowed(template.url, context);
    const href = url.href;
    if (href.includes('#')) {
      plan.checkedHref = null;
      return false;
    }
    plan.checkedHref = href;
    plan.queryJoin = !href.includes('?') ? '?' : url.search.length > 1 ? '&' : '';
  }
  return plan.checkedHref !== null;
}

/** Appends `added` (already percent-encoded) after any query the URL has, as one `search` assignment. */
function addQuery(url: URL, added: string): void {
  if (added) url.search = '?' + (url.search.length > 1 ? url.search.slice(1) + '&' : '') + added;
}

/** `key=value` pairs, strictly encoded, joined with `&`. */
function encodePairs(pairs: ReadonlyArray<[string, string]>): string {
  let out = '';
  for (const [k, v] of pairs) out += `${out ? '&' : ''}${encodeStrict(k)}=${encodeStrict(v)}`;
  return out;
}

/** A request with its arguments placed, before auth is resolved. */
interface Draft {
  plan: RequestPlan;
  /** Undefined when the URL comes from the plan's checked href. */
  url: URL | undefined;
  headerArgs: Array<[string, string]>;
  cookieArgs: Array<[string, string]>;
  body: unknown;
  stringBody: boolean;
  hasBody: boolean;
  query: Array<[string, string]>;
  styledQuery: string;
}

/**
 * Builds a tool request (docs/design/transports.md#http-call): header/cookie/body args, `{path}` placeholders,
 * URL policy, query string for every method (auth query last), merged headers, encoded body.
 * What depends only on the template (styles, static header checks, a static URL's policy check) is worked out once
 * per template.
 * @throws INVALID_ARGUMENTS on a missing path parameter, URL_POLICY, HEADER_INJECTION.
 */
export async function buildHttpRequest(
  template: HttpRequestTemplate,
  args: JsonObject,
  ctx: TransportContext,
  options: BuildHttpRequestOptions,
): Promise<HttpRequestSpec> {
  const draft = draftRequest(template, args, options);
  const auth = template.auth
    ? await resolveAuth(template.auth, ctx, asSignal(options.signal), options.remoteSource)
    : NO_AUTH;
  return finishRequest(template, draft, options, auth);
}

/**
 * `buildHttpRequest` without a promise when the template has no `auth` (nothing to resolve, so nothing to await;
 * docs/design/http-exchange.md#per-call-cost): same checks, same errors, same request.
 * @returns undefined when the template has `auth` (use `buildHttpRequest`).
 */
export function buildHttpRequestNow(
  template: HttpRequestTemplate,
  args: JsonObject,
  options: BuildHttpRequestOptions,
): HttpRequestSpec | undefined {
  if (template.auth) return undefined;
  return finishRequest(template, draftRequest(template, args, options), options, NO_AUTH);
}

/** Everything before auth: arguments placed in headers, cookies, body, path and query; the URL policy applied. */
function draftRequest(template: HttpRequestTemplate, args: JsonObject, options: BuildHttpRequestOptions): Draft {
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
  const context = options.context ?? 'tool invocation';
  let url: URL | undefined;
  if (plan.hasPlaceholders || !checkStaticUrl(template, plan, context)) {
    url = assertUrlAllowed(substituted, context);
    if (url.hash) url.hash = '';
  }

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
  return { plan, url, headerArgs, cookieArgs, body, stringBody, hasBody, query, styledQuery };
}

/** Everything after auth: the query string, merged headers and the encoded body. */
function finishRequest(
  template: HttpRequestTemplate,
  draft: Draft,
  options: BuildHttpRequestOptions,
  auth: AuthMaterial,
): HttpRequestSpec {
  const { plan, headerArgs, cookieArgs, body, hasBody, query, styledQuery } = draft;
  // The query string in one assignment: what the URL had, styled parameters, plain ones, then auth's.
  const plain =
    query.length > 0
      ? auth.query.length > 0
        ? `${encodePairs(query)}&${encodePairs(auth.query)}`
        : encodePairs(query)
      : auth.query.length > 0
        ? encodePairs(auth.query)
        : '';
  const added = styledQuery ? (plain ? `${styledQuery}&${plain}` : styledQuery) : plain;
  let url = draft.url;
  if (url !== undefined) addQuery(url, added);
  else if (styledQuery) {
    // Styled parameters may hold characters the URL's query setter still encodes: set as before.
    url = new URL(plan.checkedHref!);
    addQuery(url, added);
  } else url = new URL(added ? plan.checkedHref! + plan.queryJoin + added : plan.checkedHref!);

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
    const result = encodeBody(body, effective, draft.stringBody, {
      fileFields: template.file_fields ?? undefined,
      base64: template.body_encoding === 'base64',
    });
    encoded = result.body;
    if (headers.get('content-type') !== result.contentType)
      headers.set(headers.nameOf('content-type', 'Content-Type'), result.contentType);
  }
  return { url, method, headers: headers.toObject(), body: encoded, authHeaderNames: auth.authHeaderNames };
}
