/**
 * Keyword rewrites of one translated schema object into JSON Schema 2020-12 (docs/design/openapi.md#schema-translation):
 * examples, boolean exclusive bounds, `type`, `required`, tuple `items`, `dependencies` and OpenAPI `nullable`.
 * Split from schema-expander.ts, which calls `finishNode` on fresh objects it owns.
 */
import { mergeExamples } from './merge-examples.js';
import { setOwn } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import { admitsNull, ANNOTATIONS, JSON_TYPES } from './schema-keywords.js';

/** What a schema position that must be dropped translates to. */
export const DROP = Symbol('drop');

/** Callbacks for problems met while expanding (the caller adds the location). */
export interface SchemaProblems {
  externalRef(ref: string): void;
  missingRef(ref: string): void;
  /** A construct dropped by the translation. */
  dropped(construct: string, reason: string): void;
  /** A construct rewritten into its JSON Schema 2020-12 equivalent. */
  changed(construct: string, reason: string): void;
}

const EXCLUSIVE_BOUNDS = [
  ['exclusiveMinimum', 'minimum'],
  ['exclusiveMaximum', 'maximum'],
] as const;
const NULLABLE_KEYS = ['nullable', 'x-nullable'] as const;

/**
 * Keyword rewrites that need the whole (fresh, caller-owned) object. May return a wrapper. Indexed loops over
 * constant tables: it runs once per rewritten schema, mostly cold (docs/design/performance.md#cold-openapi).
 */
export function finishNode(
  s: Record<string, unknown>,
  removed: string[],
  problems: SchemaProblems,
  expandDependency: (schema: unknown) => unknown,
): Record<string, unknown> {
  if ('example' in s || ('examples' in s && !Array.isArray(s.examples))) {
    const candidates: unknown[] = [];
    if (s.example !== undefined) candidates.push(s.example);
    const ex = s.examples;
    if (Array.isArray(ex)) candidates.push(...ex);
    else if (isPlainObject(ex)) {
      for (const k of Object.keys(ex)) {
        const e = ex[k];
        if (isPlainObject(e) && 'value' in e) candidates.push(e.value);
      }
    }
    if ('example' in s) problems.changed('example', 'OpenAPI example moved into the JSON Schema examples array');
    delete s.example;
    const merged = mergeExamples(candidates);
    if (merged.length > 0) s.examples = merged;
    else delete s.examples;
  }
  for (let i = 0; i < EXCLUSIVE_BOUNDS.length; i++) {
    const [ex, bound] = EXCLUSIVE_BOUNDS[i];
    if (typeof s[ex] !== 'boolean') continue;
    // Draft-4 boolean form → 2020-12 numeric form.
    if (s[ex] === true && typeof s[bound] === 'number') {
      s[ex] = s[bound];
      delete s[bound];
    } else {
      delete s[ex];
    }
    problems.changed(`boolean ${ex}`, 'rewritten in the JSON Schema 2020-12 numeric form');
  }
  if ('type' in s) fixType(s, problems);
  if ('required' in s) {
    const r = s.required;
    if (Array.isArray(r)) {
      const names = [...new Set(r.filter((n): n is string => typeof n === 'string' && !removed.includes(n)))];
      if (names.length !== r.length) s.required = names;
      if (names.length === 0) delete s.required;
    } else {
      delete s.required;
      problems.dropped('keyword required', 'not an array of property names (draft-3 boolean form); removed');
    }
  }
  if (Array.isArray(s.items)) {
    // Draft-4 tuple form → 2020-12 prefixItems; additionalItems becomes items.
    s.prefixItems = s.items;
    if ('additionalItems' in s) s.items = s.additionalItems;
    else delete s.items;
    delete s.additionalItems;
    problems.changed('tuple items', 'rewritten as JSON Schema 2020-12 prefixItems');
  } else if ('additionalItems' in s) {
    delete s.additionalItems;
    problems.dropped('keyword additionalItems', 'has no effect without tuple items; removed');
  }
  if ('dependencies' in s) splitDependencies(s, problems, expandDependency);
  let nullable = false;
  for (let i = 0; i < NULLABLE_KEYS.length; i++) {
    const key = NULLABLE_KEYS[i];
    if (!(key in s)) continue;
    if (s[key] === true) nullable = true;
    delete s[key];
    problems.changed(key, 'OpenAPI 3.0 nullable (Swagger x-nullable) rewritten as a JSON Schema null type');
  }
  let result = s;
  if (nullable) result = makeNullable(s);
  if (Array.isArray(result.oneOf) && result.oneOf.filter(admitsNull).length > 1) {
    // With nullable branches null matches several of them, which oneOf forbids; OpenAPI means "null is fine".
    problems.changed('oneOf with several nullable branches', 'null now accepted once, beside the oneOf');
    result = wrapNullable(result);
  }
  return result;
}

function fixType(s: Record<string, unknown>, problems: SchemaProblems): void {
  const t = s.type;
  const fix = (name: unknown): string | undefined => {
    if (typeof name !== 'string') return undefined;
    const lower = name.toLowerCase();
    if (lower === 'file') {
      s.format ??= 'binary';
      problems.changed('type file', 'rewritten as a binary string');
      return 'string';
    }
    return JSON_TYPES.has(lower) ? lower : undefined;
  };
  if (Array.isArray(t)) {
    const types = [...new Set(t.map(fix).filter((x): x is string => x !== undefined))];
    if (types.length === 0) delete s.type;
    else if (types.length !== t.length || types.some((x, i) => x !== t[i])) s.type = types;
    if (types.length !== t.length) problems.dropped('keyword type', 'entries that are not JSON types removed');
    return;
  }
  const fixed = fix(t);
  if (fixed === undefined) {
    delete s.type;
    problems.dropped('keyword type', 'not a JSON type; removed');
  } else if (fixed !== t) {
    s.type = fixed;
  }
}

function splitDependencies(
  s: Record<string, unknown>,
  problems: SchemaProblems,
  expandDependency: (schema: unknown) => unknown,
): void {
  const deps = s.dependencies as Record<string, unknown>;
  delete s.dependencies;
  const required: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const key of Object.keys(deps)) {
    const v = deps[key];
    if (Array.isArray(v))
      setOwn(
        required,
        key,
        v.filter((n) => typeof n === 'string'),
      );
    else if (typeof v === 'boolean' || isPlainObject(v)) {
      const nv = expandDependency(v);
      if (nv !== DROP) setOwn(schemas, key, nv);
    }
  }
  if (Object.keys(required).length > 0)
    s.dependentRequired = { ...(isPlainObject(s.dependentRequired) ? s.dependentRequired : {}), ...required };
  if (Object.keys(schemas).length > 0)
    s.dependentSchemas = { ...(isPlainObject(s.dependentSchemas) ? s.dependentSchemas : {}), ...schemas };
  problems.changed('keyword dependencies', 'split into JSON Schema 2020-12 dependentRequired/dependentSchemas');
}

const IN_PLACE_APPLICATORS = ['allOf', 'anyOf', 'oneOf', 'not', '$ref', 'if', 'const'];

/**
 * OpenAPI 3.0 `nullable: true` on a fresh object: widens `type` (and `enum`) when the schema has no
 * applicator that would still refuse null, otherwise wraps it as `anyOf: [schema, {type: null}]`.
 */
export function makeNullable(s: Record<string, unknown>): Record<string, unknown> {
  if (admitsNull(s)) return s;
  if (!IN_PLACE_APPLICATORS.some((k) => k in s)) {
    if (typeof s.type === 'string') s.type = [s.type, 'null'];
    else if (Array.isArray(s.type)) s.type = [...s.type, 'null'];
    if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
    return s;
  }
  return wrapNullable(s);
}

/** `{annotations…, anyOf: [<the rest>, {type: "null"}]}`. */
function wrapNullable(s: Record<string, unknown>): Record<string, unknown> {
  const outer: Record<string, unknown> = {};
  const inner: Record<string, unknown> = {};
  for (const key of Object.keys(s)) setOwn(ANNOTATIONS.has(key) ? outer : inner, key, s[key]);
  outer.anyOf = [inner, { type: 'null' }];
  return outer;
}
