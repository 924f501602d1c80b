/**
 * Compiles a transport's template schema (core/template.ts) with Ajv, on first use, and turns Ajv's errors into
 * issues that name the exact path and problem (`tools[3].tool_call_template.url: required`).
 *
 * Compiled validators are memoised per spec object for the whole process: they are pure functions of a constant
 * schema and hold no client data (no variables, sessions or credentials), so sharing them is safe and keeps the
 * per-client cost at zero.
 */
import type { ValidationIssue } from './errors.js';
import type { CallTemplateSpec, CompiledTemplate } from './template.js';
import type { PrecompiledTemplate } from './transport.js';
import { validateAuth } from './validate.js';

/** Marks a property checked as an auth object (set by `authField()` in template-schema.ts). */
const AUTH_FIELD = 'x-utcp-auth';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  data?: unknown;
  parentSchema?: Record<string, unknown>;
}
type ValidateFn = ((value: unknown, options?: object) => boolean) & { errors?: AjvError[] | null };
interface AjvLike {
  compile(schema: object): ValidateFn;
  addKeyword(definition: { keyword: string; schemaType?: string }): unknown;
}

let ajv: Promise<AjvLike> | undefined;
const compiled = new WeakMap<CallTemplateSpec, Promise<CompiledTemplate>>();

/**
 * The Ajv options of template validation, shared by the run-time compile below and the build step that generates
 * the built-in transports' validators (scripts/precompile-templates.mjs), so both validate and report alike.
 * validateSchema: false: template schemas are the transports' own constants, checked against the 2020-12
 * meta-schema by test/core/template-schemas.test.ts; checking them again here would compile the meta-schema on
 * every cold start (about 40 ms of the first registration). logger: false: the library prints nothing.
 */
export const TEMPLATE_AJV_OPTIONS = {
  validateSchema: false,
  allErrors: true,
  verbose: true,
  strict: true,
  allowUnionTypes: true,
  validateFormats: false,
  logger: false,
} as const;

/** Adds the keywords template schemas use beyond JSON Schema (the auth marker) to an Ajv instance. */
export function addTemplateKeywords(instance: AjvLike): void {
  instance.addKeyword({ keyword: AUTH_FIELD, schemaType: 'boolean' });
}

function loadAjv(): Promise<AjvLike> {
  ajv ??= import('ajv/dist/2020.js').then((mod) => {
    const Ajv = (mod as unknown as { default: new (o: object) => AjvLike }).default;
    const instance = new Ajv(TEMPLATE_AJV_OPTIONS);
    addTemplateKeywords(instance);
    return instance;
  });
  return ajv;
}

/**
 * The build-time validator of `spec`, when one was generated from this very schema; undefined otherwise (a
 * source checkout has none: only the build writes them). Importing Ajv and compiling the schema was about a
 * quarter of a cold 10,000-tool registration (docs/design/performance.md#precompiled-templates).
 */
async function precompiled(
  spec: CallTemplateSpec,
  load: () => Promise<PrecompiledTemplate | undefined>,
): Promise<ValidateFn | undefined> {
  const found = await load();
  return found && found.schema === JSON.stringify(spec.schema) ? (found.validate as ValidateFn) : undefined;
}

/**
 * Compiles `spec` (once per spec object), or takes its build-time validator when `load` gives one generated from
 * the same schema. Throws when the schema itself is invalid: a bug in the transport.
 */
export function compileTemplate(
  spec: CallTemplateSpec,
  load?: () => Promise<PrecompiledTemplate | undefined>,
): Promise<CompiledTemplate> {
  let entry = compiled.get(spec);
  if (!entry) {
    entry = (load ? precompiled(spec, load) : Promise.resolve(undefined)).then(async (fn) =>
      build(spec, fn ?? (await loadAjv()).compile(spec.schema)),
    );
    entry.catch(() => compiled.delete(spec));
    compiled.set(spec, entry);
  }
  return entry;
}

/**
 * The options every call of an Ajv validator gets: the values its parameter defaults would make. Ajv's validators
 * destructure their second argument with defaults, so a call without it builds two objects; a registration calls
 * one per tool (docs/design/performance.md#cold-registration). Frozen, and given only to validators of schemas
 * without dynamic anchors (the only thing a validator writes into it).
 */
const VALIDATE_OPTIONS = Object.freeze({ instancePath: '', dynamicAnchors: Object.freeze({}) });

function build(spec: CallTemplateSpec, fn: ValidateFn): CompiledTemplate {
  const properties = (spec.schema as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
  const authKeys = Object.keys(properties).filter((k) => properties[k][AUTH_FIELD] === true);
  const options = JSON.stringify(spec.schema).includes('"$dynamicAnchor"') ? undefined : VALIDATE_OPTIONS;
  return {
    spec,
    validate(template, path, issues) {
      if (!fn(template, options)) issues.push(...toIssues(fn.errors ?? [], spec, path));
      for (let i = 0; i < authKeys.length; i++) {
        const key = authKeys[i];
        const value = template[key];
        if (value !== undefined && value !== null) validateAuth(value, path ? `${path}.${key}` : key, issues);
      }
      if (spec.check && issues.length === 0)
        spec.check(template as never, (key: string) => (path ? `${path}.${key}` : key), issues);
    },
  };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** "a string", "an array of strings", "an object of strings", "a string or an object", ... */
function expected(schema: Record<string, unknown>): string {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t !== 'null') as string[];
  if (types.length === 1) {
    const [t] = types;
    const inner = (t === 'array' ? schema.items : t === 'object' ? schema.additionalProperties : undefined) as
      | Record<string, unknown>
      | undefined;
    if (inner && typeof inner === 'object' && inner.type === 'string') return `${ARTICLE[t]} of strings`;
    return ARTICLE[t] ?? t;
  }
  if (types.length === 2) return `${ARTICLE[types[0]]} or ${ARTICLE[types[1]]}`;
  return `${ARTICLE[types[0]]}, ${types.slice(1, -1).join(', ')} or ${types[types.length - 1]}`;
}

/** `/commands/2/command` → `commands[2].command`, prefixed with `path`. */
function issuePath(path: string, pointer: string, extra?: string): string {
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) segments.push(extra);
  let out = path;
  for (const s of segments) out += /^\d+$/.test(s) ? `[${s}]` : out ? `.${s}` : s;
  return out;
}

/** Whether the property at `pointer` is listed in its parent object's `required`. */
function isRequired(root: Record<string, unknown>, pointer: string): boolean {
  const segments = pointer.slice(1).split('/');
  let schema: Record<string, unknown> | undefined = root;
  for (const s of segments.slice(0, -1)) {
    if (!schema) return false;
    const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
    schema = /^\d+$/.test(s)
      ? (schema.items as Record<string, unknown>)
      : (props?.[s] ?? (schema.additionalProperties as Record<string, unknown>));
  }
  return Array.isArray(schema?.required) && (schema.required as string[]).includes(segments[segments.length - 1]);
}

function toIssues(errors: AjvError[], spec: CallTemplateSpec, path: string): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const schema = e.parentSchema ?? {};
    let where: string;
    let message: string;
    switch (e.keyword) {
      case 'required':
        where = issuePath(path, e.instancePath, String(e.params.missingProperty));
        message = 'required';
        break;
      case 'type':
        where = issuePath(path, e.instancePath);
        if (schema.type === 'null') message = `must be null for ${spec.type} templates`;
        else if (e.data === null)
          message = isRequired(spec.schema as never, e.instancePath) ? 'required (got null)' : 'must not be null';
        else message = `expected ${expected(schema)}, got ${typeName(e.data)}`;
        break;
      case 'enum':
        where = issuePath(path, e.instancePath);
        message = `must be one of ${(e.params.allowedValues as unknown[])
          .filter((v) => v !== null)
          .map((v) => JSON.stringify(v))
          .join(', ')}`;
        break;
      case 'pattern':
        where = issuePath(path, e.instancePath);
        message = schema.pattern === '\\S' ? 'must not be empty' : `must match ${String(schema.pattern)}`;
        break;
      case 'minItems':
        where = issuePath(path, e.instancePath);
        message = e.params.limit === 1 ? 'must not be empty' : `must have at least ${String(e.params.limit)} items`;
        break;
      case 'minimum':
      case 'maximum':
        where = issuePath(path, e.instancePath);
        message =
          typeof schema.minimum === 'number' && typeof schema.maximum === 'number'
            ? `must be between ${schema.minimum} and ${schema.maximum}`
            : `must be ${e.keyword === 'minimum' ? '≥' : '≤'} ${String(e.params.limit)}`;
        break;
      default:
        where = issuePath(path, e.instancePath);
        message = `fails "${e.keyword}"`;
    }
    // One issue per field: a value of the wrong type also fails its enum or pattern.
    if (seen.has(where)) continue;
    seen.add(where);
    out.push({ path: where, message });
  }
  return out;
}
