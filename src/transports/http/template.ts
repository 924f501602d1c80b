/** The `http` call template (docs/design/transports.md#http): its TypeScript type and its validator, in one definition. */
import { Type, authField, defineCallTemplate, oneOf, optional, stringList } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { httpFamilyFields, legacyHttpFamily, openApiFilterSchema } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'http',
  schema: Type.Object({
    ...httpFamilyFields,
    /** @default "GET" */
    http_method: optional(oneOf(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'])),
    /** @default "application/json" */
    content_type: optional(Type.String()),
    cookie_fields: optional(stringList()),
    /** *ext.* OpenAPI style/explode per argument (docs/design/openapi.md#parameter-serialization). */
    parameter_serialization: optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
    /** *ext.* Multipart body properties that are files (docs/design/transports.md#http-files). */
    file_fields: optional(stringList()),
    /** *ext.* `"base64"`: the body argument is the body's bytes, base64-encoded (docs/design/transports.md#http-files). */
    body_encoding: optional(oneOf(['base64'])),
    auth_tools: optional(authField()),
    /** OpenAPI specs: "fill" (default) or "override" (docs/design/openapi.md#manual-auth). */
    openapi_auth: optional(oneOf(['fill', 'override'])),
    /**
     * *ext.* The call may be sent twice with the effect of once, so a POST or PATCH is retried like a GET
     * (docs/design/resilience.md#retries). @default false
     */
    idempotent: optional(Type.Boolean()),
    /** Call timeout in milliseconds. @default 30000 */
    timeout: optional(Type.Number()),
    openapi_filter: optional(Type.Unsafe<typeof openApiFilterSchema.static>({ type: 'object' })),
  }),
  legacy: legacyHttpFamily,
});

export type HttpCallTemplate = TemplateOf<typeof template>;
export type HttpMethod = NonNullable<HttpCallTemplate['http_method']>;
