/** The `cli` call template (docs/design/transports.md#cli): its TypeScript type and its validator, in one definition. */
import type { Static } from '@sinclair/typebox';
import { Type, defineCallTemplate, noAuth, nonEmpty, optional, stringList, stringMap } from '../../core/template-schema.js';
import type { TemplateObject, TemplateOf } from '../../core/template.js';
import { legacyTimeoutSeconds } from '../shared/template-fields.js';

const commandStep = Type.Object({
  command: nonEmpty(),
  /** null: true only for the last step. */
  append_to_final_output: optional(Type.Boolean()),
});
export type CommandStep = Static<typeof commandStep>;

/** Legacy v0.1 cli providers (docs/design/manual-format.md#legacy-template). */
function legacy(template: TemplateObject, notes: string[], where: string): TemplateObject {
  let out = template;
  if (out.commands === undefined && typeof out.command_name === 'string') {
    const { command_name, ...rest } = out;
    out = { ...rest, commands: [{ command: command_name }] };
    notes.push(`${where}: legacy "command_name" mapped to "commands"`);
  }
  if (out.env_vars === undefined && typeof out.env === 'object' && out.env !== null && !Array.isArray(out.env)) {
    const { env, ...rest } = out;
    out = { ...rest, env_vars: env };
  }
  for (const dropped of ['param_style', 'output_format']) {
    if (out[dropped] !== undefined) {
      const { [dropped]: _, ...rest } = out;
      out = rest;
      notes.push(`${where}: legacy "${dropped}" is not supported and was dropped`);
    }
  }
  return legacyTimeoutSeconds(out, notes, where);
}

export const template = defineCallTemplate({
  type: 'cli',
  schema: Type.Object({
    auth: noAuth(),
    commands: Type.Array(commandStep, { minItems: 1 }),
    env_vars: optional(stringMap()),
    inherit_env_vars: optional(stringList()),
    working_dir: optional(Type.String()),
    /** Call timeout in milliseconds. @default 120000 */
    timeout: optional(Type.Number()),
  }),
  legacy,
});

export type CliCallTemplate = TemplateOf<typeof template>;
