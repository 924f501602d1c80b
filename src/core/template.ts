/**
 * What a transport contributes about its own call template: one definition (an object schema, core/schema-types.ts) that is at the
 * same time the TypeScript type (`TemplateOf`) and, compiled by Ajv on first use, the runtime validator. Core knows
 * only the base fields and auth objects; every type-specific field is owned by the transport's folder
 * (docs/design/adding-a-transport.md). This module has no runtime dependency: the schema builders live in
 * `template-schema.ts`, which only the (lazily loaded) template modules import.
 */
import type { Static, TObject } from './schema-types.js';
import type { ValidationIssue } from './errors.js';
import type { CallTemplateBase } from './types.js';

/** A plain object read from JSON or YAML. */
export type TemplateObject = Record<string, unknown>;

export interface CallTemplateSpec<T extends CallTemplateBase = CallTemplateBase> {
  /** The `call_template_type` this spec describes. */
  readonly type: T['call_template_type'];
  /**
   * JSON Schema of the type-specific fields (base fields and `auth` are checked by core first). Unknown keys are
   * tolerated. A property built with `authField()` is checked as an auth object.
   */
  readonly schema: TObject;
  /** Checks JSON Schema cannot express (e.g. the URL policy); `at(key)` gives the issue path of a field. */
  check?(template: T, at: (key: string) => string, issues: ValidationIssue[]): void;
  /**
   * Legacy v0.1 rewrites for this type (docs/design/manual-format.md#legacy-template). Returns the input itself when
   * nothing changed, never mutates it, and records every rewrite in `notes`. May change `call_template_type`.
   */
  legacy?(template: TemplateObject, notes: string[], where: string): TemplateObject;
  /**
   * Discovery and calls share one endpoint: a discovered tool without a template inherits the manual template
   * (docs/design/manual-format.md#legacy-manual).
   */
  readonly inheritsManualTemplate?: boolean;
  /**
   * Dialects that write a tool's call fields inline, with no template (go-utcp: `command`/`args` on the tool of a
   * `cli` provider file): the template to use for such a tool, or undefined when it has none of this type's fields.
   */
  inlineToolTemplate?(tool: TemplateObject): TemplateObject | undefined;
}

/** The template type of a `call_template_type` and its schema: base fields, discriminator, schema fields. */
export type TemplateType<K extends string, O extends TObject> = Omit<
  CallTemplateBase,
  keyof Static<O> | 'call_template_type'
> & {
  call_template_type: K;
} & Static<O>;

/** The full template type a spec describes (`TemplateOf<typeof template>`). */
export type TemplateOf<S> = S extends CallTemplateSpec<infer T> ? T : never;

/** Declares a transport's template. Pure data: calling it costs nothing until a template is validated. */
export function defineCallTemplate<const K extends string, O extends TObject>(spec: {
  type: K;
  schema: O;
  check?(template: TemplateType<K, O>, at: (key: string) => string, issues: ValidationIssue[]): void;
  legacy?(template: TemplateObject, notes: string[], where: string): TemplateObject;
  inheritsManualTemplate?: boolean;
  inlineToolTemplate?(tool: TemplateObject): TemplateObject | undefined;
}): CallTemplateSpec<TemplateType<K, O>> {
  return spec as unknown as CallTemplateSpec<TemplateType<K, O>>;
}

/** A spec with its compiled validator (built by `template-validator.ts`, used by `validate.ts`). */
export interface CompiledTemplate {
  readonly spec: CallTemplateSpec;
  /** Appends the issues of `template` (a plain object whose base fields already passed) under `path`. */
  validate(template: Record<string, unknown>, path: string, issues: ValidationIssue[]): void;
}
