/** The `grpc` call template (docs/design/transports.md#grpc): its TypeScript type and its validator, in one definition. */
import {
  Type,
  defineCallTemplate,
  nonEmpty,
  oneOf,
  optional,
  port,
  stringList,
  stringMap,
} from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';

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
    /** *ext.* Include roots for proto_file imports, relative to root_dir (docs/design/transports.md#grpc-proto-imports). */
    proto_include_dirs: optional(stringList()),
    metadata: optional(stringMap()),
    /** In milliseconds. @default 30000 */
    timeout: optional(Type.Number()),
    tool_name_on_wire: optional(oneOf(['bare', 'qualified'])),
    transport: optional(oneOf(['grpc'])),
    /** *ext.* The wire protocol (docs/design/transports.md#grpc-wire-protocols). @default "grpc" */
    wire_protocol: optional(oneOf(['grpc', 'grpc-web', 'connect'])),
    /** *ext.* Connect message encoding: JSON or binary protobuf. @default "json" */
    connect_codec: optional(oneOf(['json', 'proto'])),
  }),
  inheritsManualTemplate: true,
});

export type GrpcCallTemplate = TemplateOf<typeof template>;
