/** The `direct` call template (docs/design/transports.md#direct): in-process functions registered on one client. */
import { Type, defineCallTemplate, noAuth, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';

export const template = defineCallTemplate({
  type: 'direct',
  schema: Type.Object({
    auth: noAuth(),
    /** The registered callable; absent on a manual template (discovery lists the manual's functions). */
    callable_name: optional(Type.String()),
  }),
});

export type DirectCallTemplate = TemplateOf<typeof template>;
