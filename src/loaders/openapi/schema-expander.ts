/**
 * `$ref` inlining and the OpenAPI → JSON Schema 2020-12 translation (docs/design/openapi.md#schema-translation,
 * #ref-expansion, #expansion-limits).
 *
 * One `SchemaRoot` per generated `inputs`/`outputs`: refs are inlined along a branch-local chain
 * (push on enter, pop on leave); a ref met again on its own branch, any ref once the per-schema
 * node budget is spent, and a large shared definition met inside another definition
 * (docs/design/openapi.md#shared-definitions) become `{"$ref":"#/$defs/<Name>"}` and the target lands
 * in that root's `$defs`.
 * `$defs` names are per document and direction, so a ref expansion is memoised together with the refs
 * it points to (also when the node budget cut it short) and reused, shared and never copied or
 * mutated, by every later root: each ref is translated at most once per document and direction.
 *
 * One expander translates for one direction: `input` drops `readOnly` properties, `output` drops
 * `writeOnly` ones. Both expanders of a document charge one `ExpansionBudget`, which bounds the work
 * (schema objects visited) and the output (schema nodes of all tools, shared subtrees counted at every
 * use) per document and throws `UtcpLimitError` naming the limit.
 */
import { pointerSegments, setOwn, type RefResolver } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import type { ExpansionBudget } from './expansion-budget.js';
import { mergeExamples } from './merge-examples.js';
import { ANNOTATIONS, asCount, asNumber, isValidPattern, JSON_TYPES, KEYWORDS } from './schema-keywords.js';
import { DROP, finishNode, makeNullable, type SchemaProblems } from './schema-rewrites.js';

interface CacheEntry {
  value: unknown;
  /** Schema nodes in `value` (charged to a root's budget and to the document's output on reuse). */
  nodes: number;
  /** Refs that `value` points to as `#/$defs/<Name>`: a root reusing `value` must define them. */
  deps: readonly string[];
  /** Nesting of inlined refs in `value` (1 = no ref inlined inside it). */
  depth: number;
}

export type SchemaDirection = 'input' | 'output';

const DEF_NAME_UNSAFE = /[^A-Za-z0-9_.-]/g;
const NO_DEPS: readonly string[] = Object.freeze([]);
/**
 * Inlined refs nest at most this deep; deeper ones become `$defs` references. Hosts validate schemas
 * recursively (Ajv overflows its stack on a few hundred nested levels).
 */
export const MAX_INLINE_DEPTH = 16;
/**
 * A definition referenced from more than one place in the document, met inside another definition, is
 * inlined only when its translation has at most this many schema nodes; a larger one is emitted once per
 * root in `$defs` (docs/design/openapi.md#shared-definitions). Inlining every use copied it once per use
 * and multiplied: megabytes of schema per tool that hosts and models must read and Ajv must compile.
 */
export const SHARED_INLINE_MAX_NODES = 32;

export interface SchemaExpanderOptions {
  maxNodes: number;
  direction: SchemaDirection;
  budget: ExpansionBudget;
  problems: SchemaProblems;
  /** `surveyDocument(doc).refUses`: refs written more than once are shared definitions. */
  refUses: ReadonlyMap<string, number>;
}

/**
 * Per-document, per-direction state shared by every root: the resolver, the `$defs` names (one name per
 * ref, so memoised expansions mean the same thing in every root) and the memo of expansions.
 */
export class SchemaExpander {
  readonly resolver: RefResolver;
  readonly maxNodes: number;
  readonly direction: SchemaDirection;
  readonly budget: ExpansionBudget;
  readonly problems: SchemaProblems;
  readonly refUses: ReadonlyMap<string, number>;
  readonly cache = new Map<string, CacheEntry>();
  readonly #defNames = new Map<string, string>();
  readonly #usedNames = new Set<string>();
  readonly #shallow = new Map<string, CacheEntry>();
  /** `readOnly` for inputs, `writeOnly` for outputs. */
  readonly #hiddenKey: 'readOnly' | 'writeOnly';

  constructor(resolver: RefResolver, options: SchemaExpanderOptions) {
    this.resolver = resolver;
    this.maxNodes = options.maxNodes;
    this.direction = options.direction;
    this.budget = options.budget;
    this.problems = options.problems;
    this.refUses = options.refUses;
    this.#hiddenKey = options.direction === 'input' ? 'readOnly' : 'writeOnly';
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
      entry = { value, nodes: scratch.nodes, deps: scratch.scheduledRefs(), depth: 1 };
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

  /** True when the raw property schema is hidden in this direction (`readOnly` for inputs, `writeOnly` for outputs). */
  hidden(raw: unknown): boolean {
    const key = this.#hiddenKey;
    let node = raw;
    for (let hops = 0; hops < 8 && isPlainObject(node); hops++) {
      if (node[key] === true) return true;
      if (typeof node.$ref !== 'string' || !node.$ref.startsWith('#')) return false;
      node = this.resolver.resolve(node.$ref);
    }
    return false;
  }
}

/** True when `finishNode`'s `type` rewrite would leave `type` as it is (docs/design/performance.md#cold-openapi). */
function isCleanType(t: unknown): boolean {
  if (typeof t === 'string') return JSON_TYPES.has(t);
  if (!Array.isArray(t) || t.length === 0) return false;
  for (let i = 0; i < t.length; i++) {
    const name: unknown = t[i];
    if (typeof name !== 'string' || !JSON_TYPES.has(name)) return false;
    for (let j = 0; j < i; j++) if (t[j] === name) return false;
  }
  return true;
}

/**
 * True when `required` is a non-empty list of distinct names, which `finishNode` keeps as it is unless a property
 * was removed (the caller checks that separately).
 */
function isCleanRequired(r: unknown): boolean {
  if (!Array.isArray(r) || r.length === 0) return false;
  if (r.length > 32) {
    for (let i = 0; i < r.length; i++) if (typeof r[i] !== 'string') return false;
    return new Set(r).size === r.length;
  }
  for (let i = 0; i < r.length; i++) {
    const name: unknown = r[i];
    if (typeof name !== 'string') return false;
    for (let j = 0; j < i; j++) if (r[j] === name) return false;
  }
  return true;
}

export class SchemaRoot {
  readonly #x: SchemaExpander;
  #nodes = 0;
  readonly #exhausted: boolean;
  /** Refs this root must define in `$defs`, in scheduling order. */
  readonly #scheduled = new Set<string>();
  /** One frame per ref being expanded: the `$defs` refs its expansion points to. */
  readonly #depFrames: Set<string>[] = [];
  /** One entry per ref being expanded: the deepest inlined-ref nesting met inside it so far. */
  readonly #depthFrames: number[] = [];
  /** Refs expanded by this root (their nodes charged) but referenced through `$defs`, not inlined. */
  readonly #charged = new Set<string>();
  /** `dependencies` schemas are translated as fresh subschemas (docs/design/openapi.md#schema-translation). */
  readonly #expandDependency = (schema: unknown): unknown => this.#sub(schema, new Set());
  /** The ref chain of `expand` calls (entered and left on the branch being expanded). */
  readonly #chain = new Set<string>();

  /** `exhausted`: a root whose budget is already spent (every ref becomes a `$defs` reference). */
  constructor(expander: SchemaExpander, exhausted = false) {
    this.#x = expander;
    this.#exhausted = exhausted;
  }

  /** Schema nodes of this root so far. */
  get nodes(): number {
    return this.#nodes;
  }

  /**
   * Expands and translates one schema (any `$ref` in it is resolved or turned into a `$defs` reference
   * of this root). `selfRef` names the ref `schema` was reached through, when it is a definition body.
   */
  expand(schema: unknown, selfRef?: string): unknown {
    // One chain per root, empty between calls (a throw may leave entries behind): no new set per parameter,
    // body and response (docs/design/performance.md#cold-openapi).
    const chain = this.#chain;
    if (chain.size > 0) chain.clear();
    if (selfRef !== undefined) chain.add(selfRef);
    const out = this.#sub(schema, chain);
    if (selfRef !== undefined) chain.delete(selfRef);
    return out === DROP ? {} : out;
  }

  /** The refs scheduled so far (before `finish`). */
  scheduledRefs(): readonly string[] {
    return this.#scheduled.size > 0 ? [...this.#scheduled] : NO_DEPS;
  }

  #spent(): boolean {
    return this.#exhausted || this.#nodes >= this.#x.maxNodes;
  }

  #reuse(entry: CacheEntry): void {
    this.#nodes += entry.nodes;
    this.#x.budget.reuse(entry.nodes);
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
      const full = x.cache.get(ref);
      const cached = this.#spent() ? x.shallowDefinition(ref) : full;
      if (cached) {
        if (!(cached === full && this.#charged.has(ref))) this.#reuse(cached);
        for (let i = 0; i < cached.deps.length; i++) this.#scheduled.add(cached.deps[i]);
        body = cached.value;
      } else {
        body = this.#expandEntry(ref, x.resolver.resolve(ref), new Set()).value;
      }
      setOwn(defs, x.defName(ref), body);
    }
    return { ...root, $defs: defs };
  }

  #noteDepth(depth: number): void {
    const top = this.#depthFrames.length - 1;
    if (top >= 0 && this.#depthFrames[top] < depth) this.#depthFrames[top] = depth;
  }

  #defRef(ref: string): Record<string, unknown> {
    this.#scheduled.add(ref);
    const frame = this.#depFrames[this.#depFrames.length - 1];
    if (frame) frame.add(ref);
    return { $ref: `#/$defs/${this.#x.defName(ref)}` };
  }

  #note(construct: string, reason: string): void {
    this.#x.problems.dropped(construct, reason);
  }

  #rewrote(construct: string, reason: string): void {
    this.#x.problems.changed(construct, reason);
  }

  /** A subschema position: objects and booleans are schemas; anything else is dropped. */
  #sub(node: unknown, chain: Set<string>): unknown {
    if (typeof node === 'boolean') return node;
    if (!isPlainObject(node)) return DROP;
    const ref = node.$ref;
    if (typeof ref === 'string') return this.#expandRef(node, ref, chain);
    return this.#expandObject(node, chain);
  }

  #expandRef(node: Record<string, unknown>, ref: string, chain: Set<string>): unknown {
    const base = this.#refTarget(ref, chain);
    let siblings: Record<string, unknown> | undefined;
    let nullable = false;
    const keys = Object.keys(node);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key === '$ref') continue;
      if (key === 'nullable' || key === 'x-nullable') {
        if (node[key] === true) nullable = true;
        this.#rewrote(key, 'OpenAPI 3.0 nullable (Swagger x-nullable) rewritten as a JSON Schema null type');
        continue;
      }
      siblings ??= {};
      setOwn(siblings, key, node[key]);
    }
    let merged: unknown = base;
    if (siblings) {
      const extra = this.#expandObject(siblings, chain) as Record<string, unknown>;
      if (base === true || base === DROP || (isPlainObject(base) && Object.keys(base).length === 0)) merged = extra;
      else if (!isPlainObject(base)) merged = { allOf: [base], ...extra };
      else if (typeof base.$ref === 'string' && Object.keys(extra).some((k) => !ANNOTATIONS.has(k))) {
        // A `$defs` reference with constraints beside it: hosts on older drafts ignore `$ref` siblings.
        merged = { allOf: [base], ...extra };
      } else {
        merged = { ...base, ...extra };
        if (Array.isArray(base.examples) && Array.isArray(extra.examples)) {
          (merged as Record<string, unknown>).examples = mergeExamples([...base.examples, ...extra.examples]);
        }
      }
    }
    if (!nullable) return merged;
    if (typeof merged === 'boolean') return merged ? true : { type: 'null' };
    return makeNullable(
      merged === base ? { ...(merged as Record<string, unknown>) } : (merged as Record<string, unknown>),
    );
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
    if (this.#spent() || chain.size >= MAX_INLINE_DEPTH) return this.#defRef(ref);
    // Inside a definition (never at the top of a root), a large definition written more than once in the
    // document goes to `$defs`; the decision depends only on the ref, so memoised expansions hold it.
    const shared = this.#depFrames.length > 0 && (x.refUses.get(ref) ?? 0) > 1;
    const cached = x.cache.get(ref);
    if (cached) {
      if (
        (shared && cached.nodes > SHARED_INLINE_MAX_NODES) ||
        this.#nodes + cached.nodes > x.maxNodes ||
        chain.size + cached.depth > MAX_INLINE_DEPTH
      )
        return this.#defRef(ref);
      this.#reuse(cached);
      this.#inlined(cached);
      return cached.value;
    }
    const entry = this.#expandEntry(ref, target, chain);
    if (shared && entry.nodes > SHARED_INLINE_MAX_NODES) {
      // Its nodes are charged already: `finish` puts the memoised value into `$defs` without charging again.
      this.#charged.add(ref);
      return this.#defRef(ref);
    }
    this.#inlined(entry);
    return entry.value;
  }

  /** Bookkeeping for an expansion inlined where it was met: its depth and the `$defs` refs it needs. */
  #inlined(entry: CacheEntry): void {
    this.#noteDepth(entry.depth);
    const deps = entry.deps;
    if (deps.length === 0) return;
    const frame = this.#depFrames[this.#depFrames.length - 1];
    for (let i = 0; i < deps.length; i++) {
      this.#scheduled.add(deps[i]);
      frame?.add(deps[i]);
    }
  }

  /**
   * Expands the target of `ref` with `ref` on the chain and memoises the result with the `$defs`
   * refs it needs. Any such result is valid in every root: names are per document, and a root
   * reusing it schedules those refs.
   */
  #expandEntry(ref: string, target: unknown, chain: Set<string>): CacheEntry {
    const nodesBefore = this.#nodes;
    const frame = new Set<string>();
    this.#depFrames.push(frame);
    this.#depthFrames.push(0);
    chain.add(ref);
    let value = this.#sub(target, chain);
    if (value === DROP) {
      this.#note(`$ref ${ref}`, 'the target is not a schema; replaced by an empty schema');
      value = {};
    }
    chain.delete(ref);
    this.#depFrames.pop();
    const depth = 1 + this.#depthFrames.pop()!;
    // Memoised even when the node budget cut it short: the cut refs are among its deps, so the value is
    // valid in every root that schedules them. Each ref is thus translated once per document and direction.
    const entry: CacheEntry = {
      value,
      nodes: this.#nodes - nodesBefore,
      deps: frame.size > 0 ? [...frame] : NO_DEPS,
      depth,
    };
    this.#x.cache.set(ref, entry);
    return entry;
  }

  /** A list of subschemas; entries that are not schemas are dropped. */
  #expandList(list: readonly unknown[], chain: Set<string>, keyword: string): unknown[] {
    let out: unknown[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      const nv = this.#sub(v, chain);
      if (nv !== v) {
        out ??= list.slice(0, i);
        if (nv === DROP) this.#note(`${keyword} entry`, 'not a schema; removed');
        else out.push(nv);
      } else if (out) {
        out.push(v);
      }
    }
    return out ?? (list as unknown[]);
  }

  /** A map of subschemas; `hide` removes properties hidden in this direction (their names are returned). */
  #expandMap(
    map: Record<string, unknown>,
    chain: Set<string>,
    keyword: string,
    hide: boolean,
    removed: string[],
  ): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(map);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const v = map[key];
      if (hide && this.#x.hidden(v)) {
        out ??= { ...map };
        delete out[key];
        removed.push(key);
        this.#note(
          this.#x.direction === 'input' ? 'readOnly property' : 'writeOnly property',
          this.#x.direction === 'input'
            ? 'set by the server, so not an input; removed from inputs'
            : 'never returned by the server; removed from outputs',
        );
        continue;
      }
      if (keyword === 'patternProperties' && !isValidPattern(key)) {
        out ??= { ...map };
        delete out[key];
        this.#note(
          'patternProperties entry',
          'the pattern is not a valid ECMAScript (u flag) regular expression; removed',
        );
        continue;
      }
      let nv = this.#sub(v, chain);
      if (nv === DROP) {
        this.#note(`${keyword} entry`, 'not a schema; replaced by an empty schema');
        nv = {};
      }
      if (nv !== v) {
        out ??= { ...map };
        setOwn(out, key, nv);
      }
    }
    return out ?? map;
  }

  /** Translates one schema object. Copy-on-write: returns `node` itself when nothing in it changes. */
  #expandObject(node: Record<string, unknown>, chain: Set<string>): unknown {
    this.#nodes++;
    this.#x.budget.visit();
    let out: Record<string, unknown> | undefined;
    let post = false;
    const removed: string[] = [];
    // Indexed loops here and in #expandMap: no iterator object per schema (docs/design/performance.md#cold-openapi).
    const keys = Object.keys(node);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const v = node[key];
      const kind = KEYWORDS.get(key);
      let nv: unknown = v;
      let reason = 'invalid value for JSON Schema 2020-12; removed';
      switch (kind) {
        // Cases in order of how often schemas use them: the switch compares kinds one by one until the code is
        // optimised (docs/design/performance.md#cold-openapi).
        case 'type':
          // A lowercase JSON type (or a list of distinct ones) is kept as it is: no copy, no rewrite pass.
          if (!isCleanType(v)) post = true;
          break;
        case 'string':
          if (typeof v !== 'string') nv = DROP;
          break;
        case 'example':
        case 'nullable':
          post = true;
          break;
        case 'map':
          nv = isPlainObject(v) ? this.#expandMap(v, chain, key, key === 'properties', removed) : DROP;
          break;
        case 'enum':
          if (!Array.isArray(v) || v.length === 0) nv = DROP;
          break;
        case 'required':
          if (!isCleanRequired(v)) post = true;
          break;
        case 'any':
          break;
        case 'items':
          if (Array.isArray(v)) {
            post = true;
            nv = v.length > 0 ? this.#expandList(v, chain, key) : DROP;
          } else {
            nv = this.#sub(v, chain);
          }
          break;
        case 'list':
          nv = Array.isArray(v) && v.length > 0 ? this.#expandList(v, chain, key) : DROP;
          if (Array.isArray(nv) && nv.length === 0) nv = DROP;
          break;
        case 'schema':
          nv = this.#sub(v, chain);
          break;
        case 'boolean':
          nv = typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : DROP;
          break;
        case undefined:
          nv = DROP;
          reason = key.startsWith('x-')
            ? 'vendor extensions are not JSON Schema; removed'
            : 'not a JSON Schema 2020-12 keyword; removed';
          break;
        case 'additionalItems':
          post = true;
          nv = this.#sub(v, chain);
          break;
        case 'dependencies':
          post = true;
          if (!isPlainObject(v)) nv = DROP;
          break;
        case 'pattern':
          if (typeof v !== 'string' || !isValidPattern(v)) {
            nv = DROP;
            reason = 'not a valid ECMAScript (u flag) regular expression; removed';
          }
          break;
        case 'count':
          nv = asCount(v) ?? DROP;
          break;
        case 'number':
          nv = asNumber(v) ?? DROP;
          break;
        case 'positive': {
          const n = asNumber(v);
          nv = n !== undefined && n > 0 ? n : DROP;
          break;
        }
        case 'exclusive':
          if (typeof v === 'boolean') post = true;
          else nv = asNumber(v) ?? DROP;
          break;
        case 'examples':
          if (!Array.isArray(v)) post = true;
          break;
        case 'openapi':
          nv = DROP;
          reason =
            key === 'discriminator'
              ? 'an OpenAPI hint for picking a oneOf/anyOf branch; validation is unchanged'
              : 'OpenAPI documentation, not JSON Schema; removed';
          break;
        case 'identifier':
          nv = DROP;
          reason = 'would re-base references inside the tool schema; removed';
          break;
      }
      if (nv === DROP) {
        out ??= { ...node };
        delete out[key];
        this.#note(key.startsWith('x-') ? 'x-* extension keywords' : `keyword ${key}`, reason);
        continue;
      }
      if (nv !== v) {
        out ??= { ...node };
        setOwn(out, key, nv);
      }
    }
    if (Array.isArray(node.oneOf) && (node.oneOf as unknown[]).length > 1) post = true;
    if (!post && removed.length === 0) return out ?? node;
    out ??= { ...node };
    return finishNode(out, removed, this.#x.problems, this.#expandDependency);
  }
}
