/** The `graphql` call template (docs/design/transports.md#graphql): its TypeScript type and its validator, in one definition. */
import {
  Type,
  defineCallTemplate,
  nonEmpty,
  oneOf,
  optional,
  stringList,
  stringMap,
} from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';

export const template = defineCallTemplate({
  type: 'graphql',
  schema: Type.Object({
    url: nonEmpty(),
    operation_type: optional(oneOf(['query', 'mutation', 'subscription'])),
    operation_name: optional(Type.String()),
    headers: optional(stringMap()),
    header_fields: optional(stringList()),
    query: optional(Type.String()),
    variable_types: optional(stringMap()),
    subscription_url: optional(Type.String()),
    /** *ext.* How subscriptions travel (docs/design/transports.md#graphql-http-subscriptions). @default "auto" */
    subscription_transport: optional(oneOf(['auto', 'websocket', 'sse', 'multipart'])),
    /** In milliseconds. @default 30000 */
    timeout: optional(Type.Number()),
  }),
  inheritsManualTemplate: true,
});

export type GraphqlCallTemplate = TemplateOf<typeof template>;
