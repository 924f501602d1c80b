/** `openapi_filter` (docs/design/openapi.md#filters): include/exclude by tag, path glob, method and operation id. */
import { UtcpError } from '../../core/errors.js';
import { isPlainObject } from '../../core/guards.js';

const KEYS = [
  'include_tags',
  'exclude_tags',
  'include_paths',
  'exclude_paths',
  'include_methods',
  'exclude_methods',
  'include_operation_ids',
  'exclude_operation_ids',
] as const;

type FilterKey = (typeof KEYS)[number];

export interface FilterSubject {
  method: string;
  path: string;
  tags: readonly string[];
  operationId?: string;
  /** The generated tool name before de-duplication. */
  toolName: string;
}

/** `*` = any characters except `/`, `**` = any characters; the whole path must match. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        re += '.*';
        i++;
      } else {
        re += '[^/]*';
      }
    } else {
      re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`, 's');
}

/** A compiled filter; `matches` is true when the operation is kept. */
export class OperationFilter {
  readonly #lists: Partial<Record<FilterKey, string[]>> = {};
  readonly #include: RegExp[] | undefined;
  readonly #exclude: RegExp[] | undefined;

  /** Throws `UtcpError('INVALID_CONFIG')` when a list is not an array of strings. Unknown keys are reported. */
  constructor(filter: unknown, onUnknownKey: (key: string) => void) {
    if (filter !== undefined && filter !== null && !isPlainObject(filter)) {
      throw new UtcpError('INVALID_CONFIG', 'openapi_filter must be an object');
    }
    const f = (filter ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(f)) {
      if (!(KEYS as readonly string[]).includes(key)) {
        onUnknownKey(key);
        continue;
      }
      const v = f[key];
      if (v === undefined || v === null) continue;
      const list = typeof v === 'string' ? [v] : v;
      if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
        throw new UtcpError('INVALID_CONFIG', `openapi_filter.${key} must be an array of strings`);
      }
      this.#lists[key as FilterKey] = list;
    }
    this.#include = this.#lists.include_paths?.map(globToRegExp);
    this.#exclude = this.#lists.exclude_paths?.map(globToRegExp);
  }

  get active(): boolean {
    return Object.keys(this.#lists).length > 0;
  }

  matches(s: FilterSubject): boolean {
    const l = this.#lists;
    const tags = s.tags.map((t) => t.toLowerCase());
    const tagIn = (list: string[]) => list.some((t) => tags.includes(t.toLowerCase()));
    const methodIn = (list: string[]) => list.some((m) => m.toLowerCase() === s.method.toLowerCase());
    const idIn = (list: string[]) => list.some((id) => id === s.operationId || id === s.toolName);
    const pathIn = (res: RegExp[]) => res.some((re) => re.test(s.path));
    if (l.include_tags && !tagIn(l.include_tags)) return false;
    if (this.#include && !pathIn(this.#include)) return false;
    if (l.include_methods && !methodIn(l.include_methods)) return false;
    if (l.include_operation_ids && !idIn(l.include_operation_ids)) return false;
    if (l.exclude_tags && tagIn(l.exclude_tags)) return false;
    if (this.#exclude && pathIn(this.#exclude)) return false;
    if (l.exclude_methods && methodIn(l.exclude_methods)) return false;
    if (l.exclude_operation_ids && idIn(l.exclude_operation_ids)) return false;
    return true;
  }
}
