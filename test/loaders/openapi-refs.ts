/** Pure helpers (no vitest): walk a tool schema and resolve its local `$ref`s. */

const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples', 'example']);

function decode(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Walks schema positions (not data keywords or `x-*` extensions) and returns every `$ref` with its path. */
export function collectRefs(schema: unknown): Array<{ ref: string; at: string }> {
  const out: Array<{ ref: string; at: string }> = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, `${at}/${i}`));
      return;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push({ ref: v, at });
      else if (!DATA_KEYS.has(k) && !k.startsWith('x-')) walk(v, `${at}/${k}`);
    }
  };
  walk(schema, '#');
  return out;
}

/** Resolves a local `#/…` pointer inside `root`; undefined when it does not resolve. */
export function resolveInside(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const seg of ref.slice(2).split('/').map(decode)) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}
