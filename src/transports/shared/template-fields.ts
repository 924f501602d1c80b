/**
 * Template fields and legacy rewrites shared by several transports (each transport still owns its template:
 * it spreads these fragments into its own schema in `<type>/template.ts`).
 */
import type { Static } from '../../core/schema-types.js';
import {
  Type,
  authField,
  nonEmpty,
  oneOf,
  optional,
  stringList,
  stringMap,
  stringOrObject,
} from '../../core/template-schema.js';
import type { TemplateObject } from '../../core/template.js';
import type { CallTemplateBase } from '../../core/types.js';

/** `url`, `headers`, `body_field`, `header_fields` (http, sse, streamable_http; docs/design/transports.md#http). */
export const httpFamilyFields = {
  url: nonEmpty(),
  headers: optional(stringMap()),
  body_field: optional(Type.String()),
  header_fields: optional(stringList()),
};

/** Operation filter for OpenAPI conversion (docs/design/openapi.md#filters); the converter checks its contents. */
export const openApiFilterSchema = Type.Object({
  include_tags: Type.Optional(stringList()),
  exclude_tags: Type.Optional(stringList()),
  include_paths: Type.Optional(stringList()),
  exclude_paths: Type.Optional(stringList()),
  include_methods: Type.Optional(stringList()),
  exclude_methods: Type.Optional(stringList()),
  include_operation_ids: Type.Optional(stringList()),
  exclude_operation_ids: Type.Optional(stringList()),
});
export type OpenApiFilter = Static<typeof openApiFilterSchema>;

/** Fields of templates whose document may be an OpenAPI spec (text, file; http has its own `auth_tools`). */
export const openApiSourceFields = {
  auth_tools: optional(authField()),
  /** "fill" (default) or "override" (docs/design/openapi.md#manual-auth). */
  openapi_auth: optional(oneOf(['fill', 'override'])),
  openapi_filter: optional(Type.Unsafe<OpenApiFilter>({ type: 'object' })),
  base_url: optional(Type.String()),
};
const openApiSource = Type.Object(openApiSourceFields);
/** A template that may hold an OpenAPI document. */
export type OpenApiSourceTemplate = CallTemplateBase & Static<typeof openApiSource>;

/** Request fields of the socket transports (tcp, udp; docs/design/transports.md#socket-payload). */
export const socketRequestFields = {
  request_data_format: optional(oneOf(['json', 'text'])),
  request_data_template: optional(Type.String()),
  response_byte_format: optional(Type.String()),
  /** In milliseconds. @default 30000 */
  timeout: optional(Type.Number()),
  request_wrapper: optional(oneOf(['none', 'tool_args'])),
  tool_name_on_wire: optional(oneOf(['bare', 'qualified'])),
  discovery_message: optional(stringOrObject()),
};
const socketRequest = Type.Object(socketRequestFields);
/** What tcp and udp templates share. */
export type SocketRequestOptions = Static<typeof socketRequest>;

/** Legacy v0.1 `method` → `http_method`, uppercased (docs/design/manual-format.md#legacy-template). */
export function legacyHttpMethod(template: TemplateObject): TemplateObject {
  let out = template;
  if (out.http_method === undefined && typeof out.method === 'string') {
    const { method, ...rest } = out;
    out = { ...rest, http_method: method };
  }
  if (typeof out.http_method === 'string' && out.http_method !== out.http_method.toUpperCase()) {
    out = { ...out, http_method: out.http_method.toUpperCase() };
  }
  return out;
}

/** Legacy v0.1 `timeout_ms` → `timeout` (tcp, udp). */
export function legacyTimeoutMs(template: TemplateObject): TemplateObject {
  if (template.timeout !== undefined || template.timeout_ms === undefined) return template;
  const { timeout_ms, ...rest } = template;
  return { ...rest, timeout: timeout_ms };
}

/** A millisecond `timeout` below this is taken as seconds (docs/design/transports.md#timeout-units). */
export const SECONDS_BELOW = 1000;

/**
 * Other implementations write seconds in millisecond `timeout` fields (the official converter's `timeout: 30`); no
 * real deadline is under a second, so small values are seconds (docs/design/transports.md#timeout-units).
 */
export function legacyTimeoutSeconds(template: TemplateObject, notes: string[], where: string): TemplateObject {
  const timeout = template.timeout;
  if (typeof timeout !== 'number' || timeout <= 0 || timeout >= SECONDS_BELOW) return template;
  notes.push(
    `${where}: timeout below ${SECONDS_BELOW} read as seconds (${timeout} → ${timeout * 1000} ms); write milliseconds to silence this`,
  );
  return { ...template, timeout: timeout * 1000 };
}

/**
 * The legacy rewrite of `http`: method name and case, then timeout units. Only `http` keeps the seconds rule: the
 * official converter writes `timeout: 30` on its HTTP tools; every other millisecond template is read as written.
 */
export function legacyHttpFamily(template: TemplateObject, notes: string[], where: string): TemplateObject {
  return legacyTimeoutSeconds(legacyHttpMethod(template), notes, where);
}

/** The legacy rewrite of tcp and udp: `timeout_ms` (milliseconds by name) → `timeout`. No seconds rule here. */
export function legacySocket(template: TemplateObject): TemplateObject {
  return legacyTimeoutMs(template);
}
