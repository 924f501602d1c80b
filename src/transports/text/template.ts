/** The `text` call template (docs/design/transports.md#text): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, noAuth } from '../../core/template-schema.js';
import type { TemplateObject, TemplateOf } from '../../core/template.js';
import { openApiSourceFields } from '../shared/template-fields.js';

/** A legacy `text` provider with `file_path` and no `content` is a `file` manual (docs/design/manual-format.md#legacy-template). */
function legacy(template: TemplateObject, notes: string[], where: string): TemplateObject {
  if (template.file_path === undefined || template.content !== undefined) return template;
  notes.push(`${where}: legacy "text" template with "file_path" mapped to "file"`);
  return { ...template, call_template_type: 'file' };
}

export const template = defineCallTemplate({
  type: 'text',
  schema: Type.Object({
    auth: noAuth(),
    content: Type.String(),
    ...openApiSourceFields,
  }),
  legacy,
});

export type TextCallTemplate = TemplateOf<typeof template>;
