/**
 * Validation of tool arguments against the tool's `inputs` JSON Schema (2020-12), compiled once per tool.
 * Ajv is loaded on the first validation, and one Ajv instance belongs to one client. `pattern` and
 * `patternProperties` run on the linear-time engine, loaded with the first schema that has one
 * (docs/design/security.md#untrusted-regex).
 */
import { UtcpValidationError, type ValidationIssue } from './errors.js';
import { compileLinearRegex, linearRegexLoaded, loadLinearRegex, type LinearRegex } from './linear-regex.js';
import type { Logger } from './logger.js';
import { MAX_TEMPLATE_NESTING_DEPTH, nestedTooDeep } from './nesting.js';
import type { JsonSchema, Tool } from './types.js';

type ValidateFn = ((data: unknown) => boolean) & {
  errors?: Array<{ instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }> | null;
};

/**
 * OpenAPI 3.0 `nullable: true` → a type array allowing null, on a copy. The recursion is bounded: a schema nested
 * deeper is not compiled (docs/design/threat-model.md#edges-and-nesting), as no schema Ajv could compile is.
 */
function normalizeNullable(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  if (depth >= MAX_TEMPLATE_NESTING_DEPTH) throw nestedTooDeep('inputs schema', ['inputs']);
  if (Array.isArray(schema)) return schema.map((v) => normalizeNullable(v, depth + 1));
  const src = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src))
    out[k] = k === 'enum' || k === 'const' || k === 'examples' || k === 'default' ? v : normalizeNullable(v, depth + 1);
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
  }
  return out;
}

function pathOf(instancePath: string): string {
  if (!instancePath) return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

/** Thrown by the pattern engine hook while the engine is not loaded yet: load it, then compile again. */
class EngineNotLoaded extends Error {}

/** A schema pattern the engine cannot run: it accepts everything (the keyword is skipped, with a warning). */
function skippedPattern(pattern: string): LinearRegex {
  return { source: pattern, test: () => true, toString: () => `/${pattern}/skipped` };
}

export class ArgumentValidator {
  #ajv: Promise<{ compile(schema: object): ValidateFn }> | undefined;
  readonly #cache = new WeakMap<Tool, ValidateFn | null>();
  readonly #logger: Required<Logger>;
  /** The patterns skipped by the compile running now (compiling is synchronous, so one list at a time). */
  #skipped: string[] = [];
  /** Ajv's `code.regExp` hook: every schema pattern goes to the linear-time engine. */
  readonly #regExp = Object.assign(
    (pattern: string): LinearRegex => {
      if (!linearRegexLoaded()) throw new EngineNotLoaded();
      const result = compileLinearRegex(pattern, { dialect: 'ecmascript' });
      if (result.ok) return result.regex;
      this.#skipped.push(
        `${JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern)}: ${result.problem}`,
      );
      return skippedPattern(pattern);
    },
    { code: 'linearRegExp' },
  );

  constructor(logger: Required<Logger>) {
    this.#logger = logger;
  }

  #load() {
    this.#ajv ??= Promise.all([import('ajv/dist/2020.js'), import('ajv-formats')]).then(([mod, formats]) => {
      const Ajv = (mod as unknown as { default: new (o: object) => { compile(schema: object): ValidateFn } }).default;
      // Patterns are ECMA-262 with the `u` flag (code points); the RE2 engine also accepts `\\-`, which many real
      // OpenAPI patterns have and JavaScript rejects in Unicode mode.
      // Ajv's own notes (e.g. an unknown format, ignored) go to our logger, never to the console.
      const notes = {
        log: () => {},
        warn: (...m: unknown[]) => this.#logger.debug(`Ajv: ${m.join(' ')}`),
        error: (...m: unknown[]) => this.#logger.debug(`Ajv: ${m.join(' ')}`),
      };
      const ajv = new Ajv({
        strict: false,
        allErrors: true,
        validateSchema: false,
        unicodeRegExp: true,
        code: { regExp: this.#regExp },
        logger: notes,
      });
      // `format` is checked before sending (docs/design/manual-format.md#argument-formats).
      (formats as unknown as { default: (ajv: object, options: object) => void }).default(ajv, { mode: 'full' });
      return ajv;
    });
    return this.#ajv;
  }

  /** Compiles `schema`, loading the pattern engine first if the schema turns out to need it. */
  async #compile(ajv: { compile(schema: object): ValidateFn }, schema: object, toolName: string): Promise<ValidateFn> {
    for (;;) {
      const skipped: string[] = [];
      this.#skipped = skipped;
      try {
        const fn = ajv.compile(schema);
        if (skipped.length > 0)
          this.#logger.warn(
            `The inputs schema of ${toolName} has patterns the linear-time regex engine cannot run; those keywords are not checked`,
            { patterns: skipped },
          );
        return fn;
      } catch (e) {
        if (!(e instanceof EngineNotLoaded)) throw e;
      } finally {
        this.#skipped = [];
      }
      await loadLinearRegex();
    }
  }

  /** Returns the problems with `args`; empty when valid, or when the schema cannot be compiled (logged). */
  async validate(tool: Tool, args: Record<string, unknown>): Promise<ValidationIssue[]> {
    const schema = tool.inputs as JsonSchema;
    if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return [];
    let fn = this.#cache.get(tool);
    if (fn === undefined) {
      const ajv = await this.#load();
      try {
        const copy = normalizeNullable(schema) as Record<string, unknown>;
        delete copy.$id;
        if (copy.type === undefined && copy.properties !== undefined) copy.type = 'object';
        fn = await this.#compile(ajv, copy, tool.name);
      } catch (e) {
        // A schema nested past the bound fails the call (closed), not just its validation (open).
        if (e instanceof UtcpValidationError) throw new UtcpValidationError(`inputs schema of ${tool.name}`, e.issues);
        this.#logger.warn(`Cannot compile the inputs schema of ${tool.name}; its arguments are not validated`, {
          error: (e as Error).message,
        });
        fn = null;
      }
      this.#cache.set(tool, fn);
    }
    return issuesOf(fn, args);
  }

  /**
   * `validate` without a promise once the tool's schema is compiled (docs/design/http-exchange.md#per-call-cost).
   * @returns the problems (empty when valid), or undefined when the schema is not compiled yet (call `validate`).
   */
  validateNow(tool: Tool, args: Record<string, unknown>): ValidationIssue[] | undefined {
    const fn = this.#cache.get(tool);
    if (fn !== undefined) return issuesOf(fn, args);
    const schema = tool.inputs as JsonSchema;
    return !schema || typeof schema !== 'object' || Object.keys(schema).length === 0 ? [] : undefined;
  }
}

/** The problems `fn` (null: a schema that could not be compiled, not checked) finds in `args`. */
function issuesOf(fn: ValidateFn | null, args: Record<string, unknown>): ValidationIssue[] {
  if (fn === null || fn(args)) return [];
  return (fn.errors ?? []).map((e) => {
    const base = pathOf(e.instancePath);
    if (e.keyword === 'required') {
      const prop = String(e.params.missingProperty);
      return { path: base ? `${base}.${prop}` : prop, message: 'required' };
    }
    if (e.keyword === 'additionalProperties') {
      const prop = String(e.params.additionalProperty);
      return { path: base ? `${base}.${prop}` : prop, message: 'is not an accepted argument' };
    }
    if (e.keyword === 'enum') {
      return { path: base || '(arguments)', message: `must be one of ${JSON.stringify(e.params.allowedValues)}` };
    }
    return { path: base || '(arguments)', message: e.message ?? e.keyword };
  });
}
