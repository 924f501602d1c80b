/** The `streamable_http` call template (docs/design/transports.md#streamable-http): type and validator in one definition. */
import { Type, defineCallTemplate, oneOf, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { httpFamilyFields, legacyHttpMethod } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'streamable_http',
  schema: Type.Object({
    ...httpFamilyFields,
    /** @default "GET" */
    http_method: optional(oneOf(['GET', 'POST'])),
    /** @default "application/octet-stream" */
    content_type: optional(Type.String()),
    /** @default 4096 */
    chunk_size: optional(Type.Integer()),
    /** Whole request in milliseconds. @default 60000 */
    timeout: optional(Type.Number()),
  }),
  legacy: legacyHttpMethod,
});

export type StreamableHttpCallTemplate = TemplateOf<typeof template>;
