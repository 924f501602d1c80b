/** The `udp` call template (docs/design/transports.md#udp): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, noAuth, nonEmpty, port, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { legacySocket, socketRequestFields } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'udp',
  schema: Type.Object({
    auth: noAuth(),
    host: nonEmpty(),
    port: port(),
    ...socketRequestFields,
    /** 0 = fire-and-forget. @default 1 */
    number_of_response_datagrams: optional(Type.Integer()),
  }),
  legacy: legacySocket,
  inheritsManualTemplate: true,
});

export type UdpCallTemplate = TemplateOf<typeof template>;
