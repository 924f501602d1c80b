/**
 * Runtime validation of call templates, auth objects, tools and manuals.
 * Every problem is reported with its path (`tools[3].tool_call_template.url: required`).
 * Unknown keys are tolerated and kept (docs/design/manual-format.md#tolerant-reading).
 * Core checks the base fields and auth objects; the type-specific fields are checked by the template spec
 * of the transport that owns the type (core/template.ts, docs/design/adding-a-transport.md).
 */
import type { ValidationIssue } from './errors.js';
import { validateResilience } from './resilience.js';
import { didYouMean } from './suggest.js';
import type { CompiledTemplate } from './template.js';
import type { CallTemplateBase, JsonSchema, Tool } from './types.js';
import { isPlainObject } from './guards.js';

type FieldKind =
  | 'string'
  | 'nonempty'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'object'
  | 'array'
  | 'any'
  | 'string[]'
  | 'string-map'
  | 'auth'
  | 'string|object'
  | 'string|object|array';

interface FieldSpec {
  kind: FieldKind;
  required?: boolean;
  /** null accepted (besides absence). */
  nullable?: boolean;
  oneOf?: readonly unknown[];
}

const opt = (kind: FieldKind, oneOf?: readonly unknown[]): FieldSpec => ({ kind, nullable: true, oneOf });
const req = (kind: FieldKind): FieldSpec => ({ kind, required: true });

const BASE_FIELDS: Record<string, FieldSpec> = {
  name: opt('string'),
  call_template_type: req('nonempty'),
  auth: opt('auth'),
  allowed_communication_protocols: opt('string[]'),
};

const BASE_ENTRIES = Object.entries(BASE_FIELDS);

const TOOL_ENTRIES: ReadonlyArray<readonly [string, FieldSpec]> = [
  ['name', req('nonempty')],
  ['description', opt('string')],
  ['inputs', opt('object')],
  ['outputs', opt('object')],
  ['tags', opt('string[]')],
  ['average_response_size', opt('integer')],
];

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function bad(issues: ValidationIssue[], path: string, expected: string, value: unknown): void {
  issues.push({ path, message: `expected ${expected}, got ${typeName(value)}` });
}

function checkFields(
  obj: Record<string, unknown>,
  fields: ReadonlyArray<readonly [string, FieldSpec]>,
  prefix: string,
  issues: ValidationIssue[],
): void {
  for (let i = 0; i < fields.length; i++) {
    const [key, spec] = fields[i];
    const v = obj[key];
    if (v === undefined && !spec.required) continue;
    checkField(v, spec, prefix ? `${prefix}.${key}` : key, issues);
  }
}

function checkField(value: unknown, spec: FieldSpec, path: string, issues: ValidationIssue[]): void {
  if (value === undefined) {
    if (spec.required) issues.push({ path, message: 'required' });
    return;
  }
  if (value === null) {
    if (!spec.nullable) issues.push({ path, message: spec.required ? 'required (got null)' : 'must not be null' });
    return;
  }
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string') return void bad(issues, path, 'a string', value);
      break;
    case 'nonempty':
      if (typeof value !== 'string') return void bad(issues, path, 'a string', value);
      if (value.trim() === '') return void issues.push({ path, message: 'must not be empty' });
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return void bad(issues, path, 'an integer', value);
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return void bad(issues, path, 'a number', value);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return void bad(issues, path, 'a boolean', value);
      break;
    case 'object':
      if (!isPlainObject(value)) return void bad(issues, path, 'an object', value);
      break;
    case 'array':
      if (!Array.isArray(value)) return void bad(issues, path, 'an array', value);
      break;
    case 'string[]':
      if (!Array.isArray(value)) return void bad(issues, path, 'an array of strings', value);
      value.forEach((v, i) => {
        if (typeof v !== 'string')
          issues.push({ path: `${path}[${i}]`, message: `expected a string, got ${typeName(v)}` });
      });
      break;
    case 'string-map':
      if (!isPlainObject(value)) return void bad(issues, path, 'an object of strings', value);
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== 'string')
          issues.push({ path: `${path}.${k}`, message: `expected a string, got ${typeName(v)}` });
      }
      break;
    case 'auth':
      validateAuth(value, path, issues);
      break;
    case 'string|object':
      if (typeof value !== 'string' && !isPlainObject(value))
        return void bad(issues, path, 'a string or an object', value);
      break;
    case 'string|object|array':
      if (typeof value !== 'string' && typeof value !== 'object')
        return void bad(issues, path, 'a string, object or array', value);
      break;
    case 'any':
      break;
  }
  if (spec.oneOf && !spec.oneOf.includes(value)) {
    issues.push({ path, message: `must be one of ${spec.oneOf.map((v) => JSON.stringify(v)).join(', ')}` });
  }
}

const AUTH_FIELDS: Record<string, Record<string, FieldSpec>> = {
  api_key: {
    api_key: req('string'),
    var_name: opt('nonempty'),
    location: opt('string', ['header', 'query', 'cookie']),
  },
  basic: { username: req('string'), password: req('string') },
  oauth2: {
    token_url: req('nonempty'),
    client_id: req('string'),
    client_secret: req('string'),
    scope: opt('string'),
    refresh_token: opt('string'),
  },
  oauth2_user: { access_token: req('string'), var_name: opt('nonempty'), prefix: opt('string') },
};

const AUTH_ENTRIES: Record<string, ReadonlyArray<readonly [string, FieldSpec]>> = Object.fromEntries(
  Object.entries(AUTH_FIELDS).map(([k, v]) => [k, Object.entries(v)]),
);

/** Validates an auth object (discriminator `auth_type`). */
export function validateAuth(value: unknown, path: string, issues: ValidationIssue[]): void {
  if (!isPlainObject(value)) {
    issues.push({ path, message: `expected an auth object, got ${typeName(value)}` });
    return;
  }
  const type = value.auth_type;
  if (typeof type !== 'string') {
    issues.push({
      path: `${path}.auth_type`,
      message: 'required (one of "api_key", "basic", "oauth2", "oauth2_user")',
    });
    return;
  }
  const fields = AUTH_FIELDS[type];
  if (!fields) {
    issues.push({
      path: `${path}.auth_type`,
      message: `unknown auth type ${JSON.stringify(type)}; expected one of "api_key", "basic", "oauth2", "oauth2_user"`,
    });
    return;
  }
  checkFields(value, AUTH_ENTRIES[type], path, issues);
  if (type === 'api_key' && typeof value.var_name === 'string' && /[\r\n\0]/.test(value.var_name)) {
    issues.push({ path: `${path}.var_name`, message: 'contains CR/LF or NUL characters' });
  }
}

/** The call template types a client knows, with their compiled template specs. */
export interface TemplateLookup {
  /** Whether a transport serves this type. */
  isKnown(type: string): boolean;
  /**
   * The compiled spec of a known type, or undefined when its transport declares none (only base fields are
   * checked then). Throws when the spec exists but was not loaded yet: load before validating.
   */
  compiled(type: string): CompiledTemplate | undefined;
  /** The known types, for a "did you mean" on an unknown one. */
  readonly types?: readonly string[];
}

export interface TemplateValidationOptions {
  templates: TemplateLookup;
}

/**
 * Validates a call template (after legacy normalisation). Returns the issues; an empty list means valid.
 * Unknown `call_template_type` gives one issue on that field.
 */
export function validateCallTemplate(
  value: unknown,
  path: string,
  options: TemplateValidationOptions,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  checkCallTemplate(value, path, options, issues);
  return issues;
}

function checkCallTemplate(
  value: unknown,
  path: string,
  options: TemplateValidationOptions,
  issues: ValidationIssue[],
): void {
  if (!isPlainObject(value)) {
    issues.push({ path, message: `expected a call template object, got ${typeName(value)}` });
    return;
  }
  const before = issues.length;
  checkFields(value, BASE_ENTRIES, path, issues);
  if (value.resilience !== undefined)
    issues.push(...validateResilience(value.resilience, path ? `${path}.resilience` : 'resilience'));
  const type = value.call_template_type;
  if (typeof type !== 'string' || issues.length > before) return;
  if (!options.templates.isKnown(type)) {
    issues.push({
      path: path ? `${path}.call_template_type` : 'call_template_type',
      message: `unknown call_template_type ${JSON.stringify(type)}${didYouMean(type, options.templates.types ?? [])}`,
    });
    return;
  }
  options.templates.compiled(type)?.validate(value, path, issues);
}

export interface ToolValidationResult {
  tool?: Tool;
  issues: ValidationIssue[];
}

/** Validates one tool and fills its defaults (description "", inputs {}, outputs {}, tags []). Does not mutate the input. */
export function validateTool(value: unknown, index: number, options: TemplateValidationOptions): ToolValidationResult {
  const plain = plainValidTool(value, options);
  return plain ? { tool: plain, issues: [] } : validateToolFully(value, index, options);
}

/** `validateTool` without its fast path: every check, each problem named with its path `tools[i]`. */
export function validateToolFully(
  value: unknown,
  index: number,
  options: TemplateValidationOptions,
): ToolValidationResult {
  const shape = shapeIssues(value, index);
  if (shape) return { issues: shape };
  const issues: ValidationIssue[] = [];
  checkTool(value, `tools[${index}]`, options, issues);
  return issues.length > 0 ? { issues } : { tool: withDefaults(value as Record<string, unknown>), issues };
}

/** Where the usual tool's template check writes its issues: always empty between calls. */
const scratchIssues: ValidationIssue[] = [];

/**
 * The usual tool, checked and copied with its defaults filled in, or `undefined` when anything about it is unusual or
 * wrong (then `validateTool` checks it fully and names each problem with its path). The usual tool: a nonempty name,
 * optional description/inputs/outputs/tags/average_response_size of the right types (`inputs.required` a list of
 * names), and a template of a known type with a nonempty `call_template_type`, an optional string `name`, an optional
 * string list of protocols, no `auth` and no `resilience`, which its own spec accepts.
 *
 * Straight-line reads in one function, no helper per field and no closure: a registration runs it once per tool, and
 * most of a large manual's tools pass through it before V8 has optimised it; written with a helper per check it
 * cost a cold 10,000-tool registration about 9 ms more (docs/design/performance.md#cold-registration).
 */
export function plainValidTool(v: unknown, options: TemplateValidationOptions): Tool | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const tool = v as Record<string, unknown>;
  const name = tool.name;
  if (typeof name !== 'string' || name.trim() === '') return undefined;
  const description = tool.description;
  if (description !== undefined && description !== null && typeof description !== 'string') return undefined;
  const inputs = tool.inputs as Record<string, unknown> | undefined | null;
  if (inputs !== undefined && inputs !== null) {
    if (typeof inputs !== 'object' || Array.isArray(inputs)) return undefined;
    const required = inputs.required;
    if (required !== undefined) {
      if (!Array.isArray(required)) return undefined;
      for (let i = 0; i < required.length; i++) if (typeof required[i] !== 'string') return undefined;
    }
  }
  const outputs = tool.outputs;
  if (outputs !== undefined && outputs !== null && (typeof outputs !== 'object' || Array.isArray(outputs)))
    return undefined;
  const tags = tool.tags;
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags)) return undefined;
    for (let i = 0; i < tags.length; i++) if (typeof tags[i] !== 'string') return undefined;
  }
  const size = tool.average_response_size;
  if (size !== undefined && size !== null && !(typeof size === 'number' && Number.isInteger(size))) return undefined;
  const t = tool.tool_call_template as Record<string, unknown> | undefined | null;
  if (typeof t !== 'object' || t === null || Array.isArray(t)) return undefined;
  const type = t.call_template_type;
  if (typeof type !== 'string' || type.trim() === '') return undefined;
  const templateName = t.name;
  if (templateName !== undefined && templateName !== null && typeof templateName !== 'string') return undefined;
  const protocols = t.allowed_communication_protocols;
  if (protocols !== undefined && protocols !== null) {
    if (!Array.isArray(protocols)) return undefined;
    for (let i = 0; i < protocols.length; i++) if (typeof protocols[i] !== 'string') return undefined;
  }
  if ((t.auth !== undefined && t.auth !== null) || t.resilience !== undefined) return undefined;
  if (!options.templates.isKnown(type)) return undefined;
  options.templates.compiled(type)?.validate(t, 'tool_call_template', scratchIssues);
  if (scratchIssues.length > 0) {
    scratchIssues.length = 0;
    return undefined;
  }
  return withDefaults(tool);
}

/**
 * `inputs.required`, when present, must list property names (JSON Schema): anything else (a nested object, a
 * string) is an issue here rather than a surprise for every later consumer of the schema
 * (docs/design/threat-model.md#edges-and-nesting).
 */
function shapeIssues(value: unknown, index: number): ValidationIssue[] | undefined {
  const required = (value as { inputs?: { required?: unknown } } | null)?.inputs?.required;
  if (required === undefined || !isPlainObject((value as { inputs: unknown }).inputs)) return undefined;
  if (Array.isArray(required)) {
    let names = true;
    for (let i = 0; i < required.length && names; i++) names = typeof required[i] === 'string';
    if (names) return undefined;
  }
  return [{ path: `tools[${index}].inputs.required`, message: 'expected an array of property names (strings)' }];
}

/** A fresh tool object with the defaults filled in (the input is not mutated). */
function withDefaults(v: Record<string, unknown>): Tool {
  return {
    ...v,
    name: v.name as string,
    description: (v.description as string | undefined) ?? '',
    inputs: (v.inputs as JsonSchema | undefined) ?? {},
    outputs: (v.outputs as JsonSchema | undefined) ?? {},
    tags: (v.tags as string[] | undefined) ?? [],
    tool_call_template: v.tool_call_template as CallTemplateBase,
  };
}

function checkTool(value: unknown, path: string, options: TemplateValidationOptions, issues: ValidationIssue[]): void {
  if (!isPlainObject(value)) {
    issues.push({ path, message: `expected a tool object, got ${typeName(value)}` });
    return;
  }
  checkFields(value, TOOL_ENTRIES, path, issues);
  const at = path ? `${path}.tool_call_template` : 'tool_call_template';
  if (value.tool_call_template === undefined || value.tool_call_template === null) {
    issues.push({ path: at, message: 'required' });
  } else {
    checkCallTemplate(value.tool_call_template, at, options, issues);
  }
}
