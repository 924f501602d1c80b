/**
 * `$ref` inlining and schema normalisation (openapi.md §8).
 *
 * One `SchemaRoot` per generated `inputs`/`outputs`: refs are inlined along a branch-local chain
 * (push on enter, pop on leave); a ref met again on its own branch, or any ref once the node budget
 * is spent, becomes `{"$ref":"#/$defs/<Name>"}` and its target lands in that root's `$defs`.
 * Expansions that emitted no `$defs` ref are self-contained and are memoised per document
 * (shared between roots, never mutated afterwards).
 */
import { mergeExamples } from './examples.js';
import { isPlainObject, pointerSegments, setOwn, type RefResolver } from './ref-resolver.js';

type Kind = 'one' | 'list' | 'map' | 'items' | 'drop' | 'data' | 'example' | 'nullable' | 'exclusive';

const KEYWORDS = new Map<string, Kind>([
  ['additionalProperties', 'one'], ['additionalItems', 'one'], ['not', 'one'], ['if', 'one'], ['then', 'one'],
  ['else', 'one'], ['contains', 'one'], ['propertyNames', 'one'], ['unevaluatedItems', 'one'],
  ['unevaluatedProperties', 'one'], ['contentSchema', 'one'],
  ['allOf', 'list'], ['anyOf', 'list'], ['oneOf', 'list'], ['prefixItems', 'list'],
  ['properties', 'map'], ['patternProperties', 'map'], ['$defs', 'map'], ['definitions', 'map'],
  ['dependentSchemas', 'map'], ['dependencies', 'map'],
  ['items', 'items'],
  ['xml', 'drop'], ['externalDocs', 'drop'],
  ['enum', 'data'], ['const', 'data'], ['default', 'data'], ['required', 'data'], ['type', 'data'],
  ['discriminator', 'data'],
  ['example', 'example'], ['examples', 'example'],
  ['nullable', 'nullable'], ['x-nullable', 'nullable'],
  ['exclusiveMinimum', 'exclusive'], ['exclusiveMaximum', 'exclusive'],
]);

interface CacheEntry {
  value: unknown;
  nodes: number;
}

/** Callbacks for problems met while expanding (reported once per ref by the caller). */
export interface SchemaProblems {
  externalRef(ref: string): void;
  missingRef(ref: string): void;
}

/** Per-document state shared by every root: the resolver, the memo of self-contained expansions, the budget. */
export class SchemaExpander {
  readonly resolver: RefResolver;
  readonly maxNodes: number;
  readonly problems: SchemaProblems;
  readonly cache = new Map<string, CacheEntry>();

  constructor(resolver: RefResolver, maxNodes: number, problems: SchemaProblems) {
    this.resolver = resolver;
    this.maxNodes = maxNodes;
    this.problems = problems;
  }

  /** Starts a new root schema (one tool's `inputs` or `outputs`). */
  root(): SchemaRoot {
    return new SchemaRoot(this);
  }
}

const DEF_NAME_UNSAFE = /[^A-Za-z0-9_.-]/g;

export class SchemaRoot {
  readonly #x: SchemaExpander;
  #nodes = 0;
  #defsEmitted = 0;
  readonly #defNames = new Map<string, string>();
  readonly #usedNames = new Set<string>();
  readonly #queue: string[] = [];

  constructor(expander: SchemaExpander) {
    this.#x = expander;
  }

  /** Expands one schema (any `$ref` in it is resolved or turned into a `$defs` reference of this root). */
  expand(schema: unknown): unknown {
    return this.#expand(schema, new Set());
  }

  /** Resolves every scheduled definition and attaches `$defs` to `root` (a fresh object owned by the caller). */
  finish(root: Record<string, unknown>): Record<string, unknown> {
    if (this.#queue.length === 0) return root;
    const existing = isPlainObject(root.$defs) ? root.$defs : undefined;
    const defs: Record<string, unknown> = existing ? { ...existing } : {};
    for (let i = 0; i < this.#queue.length; i++) {
      const ref = this.#queue[i];
      const target = this.#x.resolver.resolve(ref);
      setOwn(defs, this.#defNames.get(ref)!, this.#expand(target, new Set([ref])));
    }
    return { ...root, $defs: defs };
  }

  #defRef(ref: string): Record<string, unknown> {
    let name = this.#defNames.get(ref);
    if (name === undefined) {
      const segments = pointerSegments(ref);
      const base = (segments[segments.length - 1] ?? '').replace(DEF_NAME_UNSAFE, '_') || 'def';
      name = base;
      for (let n = 2; this.#usedNames.has(name); n++) name = `${base}_${n}`;
      this.#usedNames.add(name);
      this.#defNames.set(ref, name);
      this.#queue.push(ref);
    }
    this.#defsEmitted++;
    return { $ref: `#/$defs/${name}` };
  }

  #expand(node: unknown, chain: Set<string>): unknown {
    if (typeof node !== 'object' || node === null) return node;
    if (Array.isArray(node)) return this.#expandList(node, chain);
    const ref = (node as Record<string, unknown>).$ref;
    if (typeof ref === 'string') return this.#expandRef(node as Record<string, unknown>, ref, chain);
    return this.#expandObject(node as Record<string, unknown>, chain);
  }

  #expandRef(node: Record<string, unknown>, ref: string, chain: Set<string>): unknown {
    const base = this.#refTarget(ref, chain);
    let siblings: Record<string, unknown> | undefined;
    for (const key of Object.keys(node)) {
      if (key === '$ref') continue;
      siblings ??= {};
      setOwn(siblings, key, node[key]);
    }
    if (!siblings) return base;
    const extra = this.#expandObject(siblings, chain) as Record<string, unknown>;
    if (!isPlainObject(base)) return extra;
    const merged: Record<string, unknown> = { ...base, ...extra };
    if (Array.isArray(base.examples) && Array.isArray(extra.examples)) {
      merged.examples = mergeExamples([...base.examples, ...extra.examples]);
    }
    if (merged.nullable === true && merged.type !== undefined) applyNullable(merged, 'nullable');
    return merged;
  }

  #refTarget(ref: string, chain: Set<string>): unknown {
    const x = this.#x;
    if (!ref.startsWith('#')) {
      x.problems.externalRef(ref);
      return { description: `Unresolved external reference: ${ref}` };
    }
    const target = x.resolver.resolve(ref);
    if (target === undefined) {
      x.problems.missingRef(ref);
      return { description: `Unresolved reference: ${ref}` };
    }
    if (chain.has(ref) || this.#nodes >= x.maxNodes) return this.#defRef(ref);
    const cached = x.cache.get(ref);
    if (cached) {
      if (this.#nodes + cached.nodes > x.maxNodes) return this.#defRef(ref);
      this.#nodes += cached.nodes;
      return cached.value;
    }
    const nodesBefore = this.#nodes;
    const defsBefore = this.#defsEmitted;
    chain.add(ref);
    const value = this.#expand(target, chain);
    chain.delete(ref);
    if (this.#defsEmitted === defsBefore) x.cache.set(ref, { value, nodes: this.#nodes - nodesBefore });
    return value;
  }

  #expandList(list: readonly unknown[], chain: Set<string>): unknown[] {
    let out: unknown[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      const nv = this.#expand(v, chain);
      if (nv !== v) {
        out ??= list.slice();
        out[i] = nv;
      }
    }
    return out ?? (list as unknown[]);
  }

  #expandMap(map: Record<string, unknown>, chain: Set<string>): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(map)) {
      const v = map[key];
      const nv = Array.isArray(v) ? v : this.#expand(v, chain);
      if (nv !== v) {
        out ??= { ...map };
        setOwn(out, key, nv);
      }
    }
    return out ?? map;
  }

  /** Copy-on-write: returns `node` itself when nothing inside it changes. */
  #expandObject(node: Record<string, unknown>, chain: Set<string>): unknown {
    this.#nodes++;
    let out: Record<string, unknown> | undefined;
    let special = false;
    for (const key of Object.keys(node)) {
      const kind = KEYWORDS.get(key);
      const v = node[key];
      let nv = v;
      switch (kind) {
        case 'data':
          if (key === 'type' && v === 'file') special = true;
          continue;
        case 'example':
          if (key === 'example' || !Array.isArray(v)) special = true;
          continue;
        case 'nullable':
        case 'exclusive':
          if (typeof v === 'boolean') special = true;
          continue;
        case 'drop':
          out ??= { ...node };
          delete out[key];
          continue;
        case 'one':
          nv = this.#expand(v, chain);
          break;
        case 'list':
        case 'items':
          nv = Array.isArray(v) ? this.#expandList(v, chain) : this.#expand(v, chain);
          break;
        case 'map':
          nv = isPlainObject(v) ? this.#expandMap(v, chain) : v;
          break;
        default:
          // Unknown keywords: extensions are kept verbatim; anything else object-valued is treated as a
          // schema so that no `$ref` can point outside the tool schema.
          if (typeof v !== 'object' || v === null || key.startsWith('x-')) continue;
          nv = this.#expand(v, chain);
      }
      if (nv !== v) {
        out ??= { ...node };
        setOwn(out, key, nv);
      }
    }
    if (!special) return out ?? node;
    out ??= { ...node };
    normaliseKeywords(out);
    return out;
  }
}

/** In-place normalisation of a fresh schema copy: examples, nullable, boolean exclusive bounds, `type: file`. */
function normaliseKeywords(s: Record<string, unknown>): void {
  if ('example' in s || ('examples' in s && !Array.isArray(s.examples))) {
    const candidates: unknown[] = [];
    if ('example' in s && s.example !== undefined) candidates.push(s.example);
    const ex = s.examples;
    if (Array.isArray(ex)) candidates.push(...ex);
    else if (isPlainObject(ex)) {
      for (const k of Object.keys(ex)) {
        const e = ex[k];
        if (isPlainObject(e) && 'value' in e) candidates.push(e.value);
      }
    }
    delete s.example;
    const merged = mergeExamples(candidates);
    if (merged.length > 0) s.examples = merged;
    else delete s.examples;
  }
  if (typeof s.nullable === 'boolean') applyNullable(s, 'nullable');
  if (typeof s['x-nullable'] === 'boolean') applyNullable(s, 'x-nullable');
  for (const [ex, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof s[ex] !== 'boolean') continue;
    // Draft-4 boolean form → 2020-12 numeric form.
    if (s[ex] === true && typeof s[bound] === 'number') {
      s[ex] = s[bound];
      delete s[bound];
    } else {
      delete s[ex];
    }
  }
  if (s.type === 'file') {
    s.type = 'string';
    s.format ??= 'binary';
  }
}

/** `nullable: true` with a type → type array with "null" (and null in `enum`); the keyword is removed. */
function applyNullable(s: Record<string, unknown>, key: 'nullable' | 'x-nullable'): void {
  const on = s[key] === true;
  if (on && s.type === undefined) return; // nothing to widen: keep the keyword as documentation
  delete s[key];
  if (!on) return;
  if (typeof s.type === 'string') s.type = s.type === 'null' ? 'null' : [s.type, 'null'];
  else if (Array.isArray(s.type) && !s.type.includes('null')) s.type = [...s.type, 'null'];
  if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
}

