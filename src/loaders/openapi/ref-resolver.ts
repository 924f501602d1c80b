/** Local JSON-pointer `$ref` resolution inside one OpenAPI document (docs/design/openapi.md#refs). */
import { isPlainObject } from '../../core/guards.js';

/** Own-property read: names from a spec never reach `Object.prototype` (`constructor`, `__proto__`). */
export function own(obj: unknown, key: string): unknown {
  if (typeof obj !== 'object' || obj === null) return undefined;
  return Object.prototype.hasOwnProperty.call(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** Sets an own enumerable property, also for the key `__proto__`. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Decodes `#/a/b~1c` into `['a', 'b/c']`: percent-decoding first, then `~1` → `/`, `~0` → `~`. */
export function pointerSegments(ref: string): string[] {
  const hash = ref.indexOf('#');
  const pointer = hash >= 0 ? ref.slice(hash + 1) : ref;
  if (pointer === '' || pointer === '/') return pointer === '' ? [] : [''];
  const raw = pointer.startsWith('/') ? pointer.slice(1).split('/') : pointer.split('/');
  return raw.map((segment) => {
    let s = segment;
    if (s.includes('%')) {
      try {
        s = decodeURIComponent(s);
      } catch {
        // Malformed percent-encoding: keep the raw segment.
      }
    }
    if (s.includes('~')) s = s.replace(/~1/g, '/').replace(/~0/g, '~');
    return s;
  });
}

const MISSING = Symbol('missing');

/** Resolves local refs (`#/…`) against one document; every lookup is memoised. */
export class RefResolver {
  readonly #doc: unknown;
  readonly #cache = new Map<string, unknown>();

  constructor(doc: unknown) {
    this.#doc = doc;
  }

  /** The target of a local ref, or `undefined` when it does not exist. */
  resolve(ref: string): unknown {
    const hit = this.#cache.get(ref);
    if (hit !== undefined) return hit === MISSING ? undefined : hit;
    let node: unknown = this.#doc;
    const segments = pointerSegments(ref);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (Array.isArray(node)) {
        node = /^(0|[1-9]\d*)$/.test(segment) ? node[Number(segment)] : undefined;
      } else {
        node = own(node, segment);
      }
      if (node === undefined) break;
    }
    this.#cache.set(ref, node === undefined ? MISSING : node);
    return node;
  }
}

/** Outcome of following a non-schema `$ref` chain (path item, parameter, response, request body, example). */
export type Deref = { value: Record<string, unknown>; error?: undefined } | { value?: undefined; error: string };

/**
 * Follows `$ref` on OpenAPI objects (not schemas). Keys beside a `$ref` override the target's.
 * Fails (with a reason) on external, missing, cyclic or non-object targets.
 */
export function derefObject(node: unknown, resolver: RefResolver): Deref {
  let current = node;
  let overrides: Record<string, unknown> | undefined;
  const seen = new Set<string>();
  while (isPlainObject(current) && typeof current.$ref === 'string') {
    const ref = current.$ref;
    const keys = Object.keys(current);
    if (keys.length > 1) {
      const extra: Record<string, unknown> = {};
      for (const k of keys) if (k !== '$ref') setOwn(extra, k, current[k]);
      overrides = overrides ? { ...extra, ...overrides } : extra;
    }
    if (!ref.startsWith('#')) return { error: `external reference ${ref} is not fetched` };
    if (seen.has(ref)) return { error: `reference cycle at ${ref}` };
    seen.add(ref);
    current = resolver.resolve(ref);
    if (current === undefined) return { error: `unresolved reference ${ref}` };
  }
  if (!isPlainObject(current)) return { error: 'not an object' };
  return { value: overrides ? { ...current, ...overrides } : current };
}
