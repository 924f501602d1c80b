/** The `tcp` call template (docs/design/transports.md#tcp): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, noAuth, nonEmpty, port, oneOf, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { legacySocket, socketRequestFields } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'tcp',
  schema: Type.Object({
    auth: noAuth(),
    host: nonEmpty(),
    port: port(),
    ...socketRequestFields,
    framing_strategy: optional(oneOf(['stream', 'length_prefix', 'delimiter', 'fixed_length', 'json', 'ndjson'])),
    length_prefix_bytes: optional(oneOf([1, 2, 4, 8])),
    length_prefix_endian: optional(oneOf(['big', 'little'])),
    message_delimiter: optional(Type.String()),
    interpret_escape_sequences: optional(Type.Boolean()),
    fixed_message_length: optional(Type.Integer()),
    max_response_size: optional(Type.Integer()),
    half_close: optional(Type.Boolean()),
  }),
  legacy: legacySocket,
  inheritsManualTemplate: true,
});

export type TcpCallTemplate = TemplateOf<typeof template>;
