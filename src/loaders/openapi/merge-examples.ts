/** Merging of OpenAPI `example`/`examples` into one JSON Schema `examples` array (docs/design/openapi.md#refs). */
import { derefObject, type RefResolver } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';

const jsonValidity = new WeakMap<object, boolean>();
const canonicalText = new WeakMap<object, string>();

/** True for values JSON can carry exactly: no NaN/Infinity, bigint, undefined, functions or exotic objects. */
export function isJsonValue(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      const hit = jsonValidity.get(value);
      if (hit !== undefined) return hit;
      let ok = depth < 200;
      // Indexed loops: example values are walked cold, once each (docs/design/performance.md#cold-openapi).
      if (ok && Array.isArray(value)) {
        for (let i = 0; ok && i < value.length; i++) ok = isJsonValue(value[i], depth + 1);
      } else if (ok) {
        const proto = Object.getPrototypeOf(value);
        ok = proto === Object.prototype || proto === null;
        const keys = ok ? Object.keys(value) : [];
        for (let i = 0; ok && i < keys.length; i++)
          ok = isJsonValue((value as Record<string, unknown>)[keys[i]], depth + 1);
      }
      jsonValidity.set(value, ok);
      return ok;
    }
    default:
      return false;
  }
}

/** JSON text with object keys sorted, so equal values compare equal (`true` ≠ `1`). Expects a JSON value. */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const hit = canonicalText.get(value);
  if (hit !== undefined) return hit;
  let text: string;
  if (Array.isArray(value)) {
    text = `[${value.map(canonicalJson).join(',')}]`;
  } else {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).sort();
    text = `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  canonicalText.set(value, text);
  return text;
}

/**
 * Equality of two JSON values as their canonical JSON texts compare (key order ignored, `true` ≠ `1`), without
 * building the texts: a few candidates are compared pairwise (docs/design/performance.md#cold-openapi).
 */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (!Object.hasOwn(y, k) || !jsonEqual(x[k], y[k])) return false;
  }
  return true;
}

/** Candidates up to this many are de-duplicated pairwise; more by their canonical texts. */
const PAIRWISE_MAX = 8;

/** Keeps JSON values only, de-duplicated by canonical JSON, in order. */
export function mergeExamples(candidates: readonly unknown[]): unknown[] {
  const valid = candidates.filter((c) => isJsonValue(c));
  if (valid.length < 2) return valid;
  if (valid.length <= PAIRWISE_MAX) {
    const kept: unknown[] = [];
    for (let i = 0; i < valid.length; i++) {
      let dup = false;
      for (let j = 0; j < kept.length && !dup; j++) dup = jsonEqual(kept[j], valid[i]);
      if (!dup) kept.push(valid[i]);
    }
    return kept;
  }
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const v of valid) {
    const key = canonicalJson(v);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(v);
    }
  }
  return out;
}

/**
 * Collects the examples of a parameter or media type object: `example`, and `examples` either as a
 * 3.1-style array or an OAS 3 map of Example objects (`$ref`s to `components/examples` resolved).
 * Swagger 2.0 response `examples` (mime type → value) are read with `mimeMap`.
 */
export function collectObjectExamples(
  owner: Record<string, unknown>,
  resolver: RefResolver,
  mimeMap = false,
): unknown[] {
  const out: unknown[] = [];
  if ('example' in owner && owner.example !== undefined) out.push(owner.example);
  const examples = owner.examples;
  if (Array.isArray(examples)) {
    out.push(...examples);
  } else if (isPlainObject(examples)) {
    for (const key of Object.keys(examples)) {
      const entry = examples[key];
      if (mimeMap) {
        out.push(entry);
        continue;
      }
      const example = derefObject(entry, resolver).value;
      if (example && 'value' in example) out.push(example.value);
    }
  }
  return out;
}
