/** The `cli` call template (docs/design/transports.md#cli): its TypeScript type and its validator, in one definition. */
import type { Static } from '../../core/schema-types.js';
import {
  Type,
  defineCallTemplate,
  noAuth,
  nonEmpty,
  optional,
  stringList,
  stringMap,
} from '../../core/template-schema.js';
import type { TemplateObject, TemplateOf } from '../../core/template.js';
import { checkBashContexts, checkPowerShellContexts } from './shell-contexts.js';

const commandStep = Type.Object({
  command: nonEmpty(),
  /** null: true only for the last step. */
  append_to_final_output: optional(Type.Boolean()),
});
export type CommandStep = Static<typeof commandStep>;

/** `{{name}}` and `${name}` in a go-utcp argument: a tool argument, not a variable. */
const GO_ARG = /\{\{\s*([A-Za-z_][\w-]*)\s*\}\}|\$\{([A-Za-z_]\w*)\}/g;

/**
 * One go-utcp argv entry as one shell word: literal text single-quoted; an entry with argument references
 * double-quoted with `UTCP_ARG_<name>_UTCP_END` placeholders, which the transport passes as environment values,
 * never as shell text (docs/design/transports.md#cli-dialects).
 */
function shellWord(arg: unknown): string {
  const text = typeof arg === 'string' ? arg : JSON.stringify(arg);
  if (!GO_ARG.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  GO_ARG.lastIndex = 0;
  let word = '';
  let last = 0;
  for (const m of text.matchAll(GO_ARG)) {
    word += text.slice(last, m.index).replace(/[\\"$`]/g, '\\$&') + `UTCP_ARG_${m[1] ?? m[2]}_UTCP_END`;
    last = m.index + m[0].length;
  }
  return `"${word}${text.slice(last).replace(/[\\"$`]/g, '\\$&')}"`;
}

/** go-utcp's `command` + `args` (argv form) as one command step. */
function fromCommandAndArgs(template: TemplateObject): TemplateObject {
  const { command, args, ...rest } = template;
  const words = [String(command), ...(Array.isArray(args) ? args.map(shellWord) : [])];
  return { ...rest, commands: [{ command: words.join(' ') }] };
}

/** Legacy v0.1 cli providers and the go-utcp dialect (docs/design/manual-format.md#legacy-template). */
function legacy(template: TemplateObject, notes: string[], where: string): TemplateObject {
  let out = template;
  if (out.commands === undefined && typeof out.command === 'string') {
    out = fromCommandAndArgs(out);
    notes.push(`${where}: go-utcp "command"/"args" mapped to "commands"`);
  }
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
  return out;
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
  // go-utcp cli provider files: `{ type: 'cli', tools: [{ name, command, args }] }`.
  inlineToolTemplate: (tool) =>
    typeof tool.command === 'string'
      ? { call_template_type: 'cli', command: tool.command, ...(Array.isArray(tool.args) ? { args: tool.args } : {}) }
      : undefined,
  // Templates that would run an argument value as code are refused when they are registered
  // (docs/design/threat-model.md#cli-evaluating-contexts); the call checks again before anything runs.
  check(template, at, issues) {
    if (!Array.isArray(template.commands) || template.commands.some((c) => typeof c?.command !== 'string')) return;
    const texts = template.commands.map((c) => c.command);
    try {
      if (process.platform === 'win32') checkPowerShellContexts(texts);
      else checkBashContexts(texts);
    } catch (error) {
      issues.push({ path: at('commands'), message: (error as Error).message.replace(/^cli: /, '') });
    }
  },
});

export type CliCallTemplate = TemplateOf<typeof template>;
