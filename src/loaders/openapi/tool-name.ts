/** Tool names for operations (docs/design/openapi.md#naming): sanitised, at most 64 characters, unique per spec. */

export const MAX_TOOL_NAME_LENGTH = 64;

/** FNV-1a 32-bit over the UTF-8 bytes of `text`, as 8 lowercase hex digits. */
export function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i];
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The unsanitised name source: the `operationId`, else `<method>_<path without braces>` (`/` → `root`). */
export function nameSource(operationId: unknown, method: string, path: string): string {
  if (typeof operationId === 'string' && operationId !== '') return operationId;
  const p = path.replace(/[{}]/g, '');
  return `${method.toLowerCase()}_${p === '/' || p === '' ? 'root' : p}`;
}

/** Sanitises a name source and shortens it to 64 characters with an FNV-1a suffix. */
export function toolBaseName(source: string): string {
  const name =
    source
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_+|_+$/g, '') || 'operation';
  if (name.length <= MAX_TOOL_NAME_LENGTH) return name;
  return `${name.slice(0, 55)}_${fnv1a32(source)}`;
}

/** Hands out unique names: a name already used gets `_2`, `_3`, … (base shortened to stay within 64). */
export class NameAllocator {
  readonly #used = new Set<string>();

  allocate(base: string): string {
    if (!this.#used.has(base)) {
      this.#used.add(base);
      return base;
    }
    for (let n = 2; ; n++) {
      const suffix = `_${n}`;
      const candidate = base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        return candidate;
      }
    }
  }
}
