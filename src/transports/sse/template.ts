/** The `sse` call template (docs/design/transports.md#sse): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { httpFamilyFields, legacyHttpMethod } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'sse',
  schema: Type.Object({
    ...httpFamilyFields,
    event_type: optional(Type.String()),
    /** @default true */
    reconnect: optional(Type.Boolean()),
    /** Total reconnect budget in milliseconds. @default 30000 */
    retry_timeout: optional(Type.Number()),
  }),
  legacy: legacyHttpMethod,
});

export type SseCallTemplate = TemplateOf<typeof template>;
