/** The `file` call template (docs/design/transports.md#file): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, noAuth, nonEmpty } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import { openApiSourceFields } from '../shared/template-fields.js';

export const template = defineCallTemplate({
  type: 'file',
  schema: Type.Object({
    auth: noAuth(),
    file_path: nonEmpty(),
    ...openApiSourceFields,
  }),
});

export type FileCallTemplate = TemplateOf<typeof template>;
