/**
 * `$ref` inlining and schema normalisation (docs/design/openapi.md#refs).
 *
 * One `SchemaRoot` per generated `inputs`/`outputs`: refs are inlined along a branch-local chain
 * (push on enter, pop on leave); a ref met again on its own branch, or any ref once the node budget
 * is spent, becomes `{"$ref":"#/$defs/<Name>"}` and its target lands in that root's `$defs`.
 * `$defs` names are per document, so a ref expansion is memoised together with the refs it points
 * to and reused by every later root (shared, never mutated); expansions cut by the budget are not.
 */
import { mergeExamples } from './merge-examples.js';
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
  /** Schema nodes inlined in `value` (charged to a root's budget on reuse). */
  nodes: number;
  /** Refs that `value` points to as `#/$defs/<Name>`: a root reusing `value` must define them. */
  deps: readonly string[];
}

/** Callbacks for problems met while expanding (reported once per ref by the caller). */
export interface SchemaProblems {
  externalRef(ref: string): void;
  missingRef(ref: string): void;
}

const DEF_NAME_UNSAFE = /[^A-Za-z0-9_.-]/g;
const NO_DEPS: readonly string[] = Object.freeze([]);

/**
 * Per-document state shared by every root: the resolver, the `$defs` names (one name per ref for the
 * whole document, so memoised expansions mean the same thing in every root) and the memo of expansions.
 */
export class SchemaExpander {
  readonly resolver: RefResolver;
  readonly maxNodes: number;
  readonly problems: SchemaProblems;
  readonly cache = new Map<string, CacheEntry>();
  readonly #defNames = new Map<string, string>();
  readonly #usedNames = new Set<string>();
  readonly #shallow = new Map<string, CacheEntry>();

  constructor(resolver: RefResolver, maxNodes: number, problems: SchemaProblems) {
    this.resolver = resolver;
    this.maxNodes = maxNodes;
    this.problems = problems;
  }

  /** Starts a new root schema (one tool's `inputs` or `outputs`). */
  root(): SchemaRoot {
    return new SchemaRoot(this);
  }

  /**
   * The definition body of `ref` for a root whose budget is spent: its target with every nested ref
   * as a `$defs` reference. Independent of any root, so memoised.
   */
  shallowDefinition(ref: string): CacheEntry {
    let entry = this.#shallow.get(ref);
    if (!entry) {
      const scratch = new SchemaRoot(this, true);
      const value = scratch.expand(this.resolver.resolve(ref), ref);
      entry = { value, nodes: 0, deps: scratch.scheduledRefs() };
      this.#shallow.set(ref, entry);
    }
    return entry;
  }

  /** `<Name>` for a ref: its last pointer segment, sanitised; clashes get `_2`, `_3`, … */
  defName(ref: string): string {
    let name = this.#defNames.get(ref);
    if (name === undefined) {
      const segments = pointerSegments(ref);
      const base = (segments[segments.length - 1] ?? '').replace(DEF_NAME_UNSAFE, '_') || 'def';
      name = base;
      for (let n = 2; this.#usedNames.has(name); n++) name = `${base}_${n}`;
      this.#usedNames.add(name);
      this.#defNames.set(ref, name);
    }
    return name;
  }
}

export class SchemaRoot {
  readonly #x: SchemaExpander;
  #nodes = 0;
  /** Refs emitted as `$defs` references because the budget was spent (such expansions are not memoised). */
  #budgetCuts = 0;
  /** Refs this root must define in `$defs`, in scheduling order. */
  readonly #scheduled = new Set<string>();
  /** One frame per ref being expanded: the `$defs` refs its expansion points to. */
  readonly #depFrames: Set<string>[] = [];

  /** `exhausted`: a root whose budget is already spent (every ref becomes a `$defs` reference). */
  constructor(expander: SchemaExpander, exhausted = false) {
    this.#x = expander;
    if (exhausted) this.#nodes = Infinity;
  }

  /**
   * Expands one schema (any `$ref` in it is resolved or turned into a `$defs` reference of this root).
   * `selfRef` names the ref `schema` was reached through, when it is a definition body.
   */
  expand(schema: unknown, selfRef?: string): unknown {
    return this.#expand(schema, selfRef === undefined ? new Set() : new Set([selfRef]));
  }

  /** The refs scheduled so far (before `finish`). */
  scheduledRefs(): readonly string[] {
    return this.#scheduled.size > 0 ? [...this.#scheduled] : NO_DEPS;
  }

  /** Resolves every scheduled definition and attaches `$defs` to `root` (a fresh object owned by the caller). */
  finish(root: Record<string, unknown>): Record<string, unknown> {
    if (this.#scheduled.size === 0) return root;
    const existing = isPlainObject(root.$defs) ? root.$defs : undefined;
    const defs: Record<string, unknown> = existing ? { ...existing } : {};
    // The set grows while it is iterated: definitions may schedule further definitions.
    for (const ref of this.#scheduled) {
      const x = this.#x;
      let body: unknown;
      // Once the budget is spent, definitions are shallow (memoised per document); before that they
      // are expanded like any ref, charging the budget.
      const cached = this.#nodes >= x.maxNodes ? x.shallowDefinition(ref) : x.cache.get(ref);
      if (cached) {
        this.#nodes += cached.nodes;
        for (const dep of cached.deps) this.#scheduled.add(dep);
        body = cached.value;
      } else {
        body = this.#expandTarget(ref, x.resolver.resolve(ref), new Set());
      }
      setOwn(defs, x.defName(ref), body);
    }
    return { ...root, $defs: defs };
  }

  #defRef(ref: string): Record<string, unknown> {
    this.#scheduled.add(ref);
    const frame = this.#depFrames[this.#depFrames.length - 1];
    if (frame) frame.add(ref);
    return { $ref: `#/$defs/${this.#x.defName(ref)}` };
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
    if (chain.has(ref)) return this.#defRef(ref);
    if (this.#nodes >= x.maxNodes) {
      this.#budgetCuts++;
      return this.#defRef(ref);
    }
    const cached = x.cache.get(ref);
    if (cached) {
      if (this.#nodes + cached.nodes > x.maxNodes) {
        this.#budgetCuts++;
        return this.#defRef(ref);
      }
      this.#nodes += cached.nodes;
      const frame = this.#depFrames[this.#depFrames.length - 1];
      for (const dep of cached.deps) {
        this.#scheduled.add(dep);
        frame?.add(dep);
      }
      return cached.value;
    }
    return this.#expandTarget(ref, target, chain);
  }

  /**
   * Expands the target of `ref` with `ref` on the chain and memoises the result with the `$defs`
   * refs it needs. Any such result is valid in every root: names are per document, and a root
   * reusing it schedules those refs.
   */
  #expandTarget(ref: string, target: unknown, chain: Set<string>): unknown {
    const nodesBefore = this.#nodes;
    const cutsBefore = this.#budgetCuts;
    const frame = new Set<string>();
    this.#depFrames.push(frame);
    chain.add(ref);
    const value = this.#expand(target, chain);
    chain.delete(ref);
    this.#depFrames.pop();
    const parent = this.#depFrames[this.#depFrames.length - 1];
    if (parent) for (const dep of frame) parent.add(dep);
    // A budget cut depends on this root's history: only complete expansions are reused elsewhere.
    if (this.#budgetCuts === cutsBefore) {
      this.#x.cache.set(ref, { value, nodes: this.#nodes - nodesBefore, deps: frame.size > 0 ? [...frame] : NO_DEPS });
    }
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

