/** The `grpc` call template (docs/design/transports.md#grpc): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, nonEmpty, oneOf, optional, port, stringMap } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { legacyTimeoutSeconds } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'grpc',
  schema: Type.Object({
    host: nonEmpty(),
    port: port(),
    use_ssl: optional(Type.Boolean()),
    /** @default "grpcpb.UTCPService" */
    service_name: optional(Type.String()),
    method_name: optional(Type.String()),
    proto_file: optional(Type.String()),
    metadata: optional(stringMap()),
    /** In milliseconds. @default 30000 */
    timeout: optional(Type.Number()),
    tool_name_on_wire: optional(oneOf(['bare', 'qualified'])),
    transport: optional(oneOf(['grpc'])),
  }),
  legacy: legacyTimeoutSeconds,
  inheritsManualTemplate: true,
});

export type GrpcCallTemplate = TemplateOf<typeof template>;
