/**
 * Post-processors applied in order to every tool result and stream item (docs/design/manual-format.md#post-processors):
 * `filter_dict` and `limit_strings` from the config, plus user-supplied functions.
 */
import type { ValidationIssue } from './errors.js';
import type { Tool } from './types.js';

export interface PostProcessContext {
  tool: Tool;
  /** The manual name (text before the first `.` of the tool name). */
  manualName: string;
  args: Record<string, unknown>;
}

/** A post-processor: receives a result, returns the (possibly new) result. */
export type PostProcessorFn = (result: unknown, context: PostProcessContext) => unknown;

interface FilterFields {
  exclude_tools?: string[] | null;
  only_include_tools?: string[] | null;
  exclude_manuals?: string[] | null;
  only_include_manuals?: string[] | null;
}

export interface FilterDictConfig extends FilterFields {
  tool_post_processor_type: 'filter_dict';
  exclude_keys?: string[] | null;
  only_include_keys?: string[] | null;
}

export interface LimitStringsConfig extends FilterFields {
  tool_post_processor_type: 'limit_strings';
  /** Unicode code points. @default 10000 */
  limit?: number;
}

export type PostProcessorConfig = FilterDictConfig | LimitStringsConfig;

function applies(cfg: FilterFields, ctx: PostProcessContext): boolean {
  if (cfg.exclude_tools?.includes(ctx.tool.name)) return false;
  if (cfg.only_include_tools && !cfg.only_include_tools.includes(ctx.tool.name)) return false;
  if (cfg.exclude_manuals?.includes(ctx.manualName)) return false;
  if (cfg.only_include_manuals && !cfg.only_include_manuals.includes(ctx.manualName)) return false;
  return true;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmptyContainer = (v: unknown) => (Array.isArray(v) ? v.length === 0 : isObj(v) && Object.keys(v).length === 0);

function excludeKeys(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const v = excludeKeys(item, keys);
      if ((isObj(item) || Array.isArray(item)) && isEmptyContainer(v)) continue;
      out.push(v);
    }
    return out;
  }
  if (isObj(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!keys.has(k)) out[k] = excludeKeys(v, keys);
    return out;
  }
  return value;
}

function onlyInclude(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (!isObj(item) && !Array.isArray(item)) continue;
      const v = onlyInclude(item, keys);
      if (!isEmptyContainer(v)) out.push(v);
    }
    return out;
  }
  if (isObj(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (keys.has(k)) out[k] = isObj(v) || Array.isArray(v) ? onlyInclude(v, keys) : v;
      else if (isObj(v) || Array.isArray(v)) {
        const fv = onlyInclude(v, keys);
        if (!isEmptyContainer(fv)) out[k] = fv;
      }
    }
    return out;
  }
  return value;
}

function limitStrings(value: unknown, limit: number): unknown {
  if (typeof value === 'string') {
    if (value.length <= limit) return value;
    // Count code points so a surrogate pair is never split.
    let i = 0;
    let count = 0;
    while (i < value.length && count < limit) {
      const c = value.charCodeAt(i);
      i += c >= 0xd800 && c <= 0xdbff && i + 1 < value.length ? 2 : 1;
      count++;
    }
    return value.slice(0, i);
  }
  if (Array.isArray(value)) return value.map((v) => limitStrings(v, limit));
  if (isObj(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = limitStrings(v, limit);
    return out;
  }
  return value;
}

/** Builds a post-processor function from one config entry. */
export function postProcessorFromConfig(cfg: PostProcessorConfig): PostProcessorFn {
  switch (cfg.tool_post_processor_type) {
    case 'filter_dict': {
      const exclude = cfg.exclude_keys ? new Set(cfg.exclude_keys) : undefined;
      const include = cfg.only_include_keys ? new Set(cfg.only_include_keys) : undefined;
      return (result, ctx) => {
        if (!applies(cfg, ctx)) return result;
        let r = result;
        if (exclude) r = excludeKeys(r, exclude);
        if (include) r = onlyInclude(r, include);
        return r;
      };
    }
    case 'limit_strings': {
      const limit = cfg.limit ?? 10_000;
      return (result, ctx) => (applies(cfg, ctx) ? limitStrings(result, limit) : result);
    }
  }
}

/** Validates the config's `post_processing` entries. */
export function validatePostProcessors(
  value: unknown,
  path: string,
): { configs: PostProcessorConfig[]; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const configs: PostProcessorConfig[] = [];
  if (value === undefined || value === null) return { configs, issues };
  if (!Array.isArray(value)) return { configs, issues: [{ path, message: 'expected an array' }] };
  value.forEach((entry, i) => {
    const p = `${path}[${i}]`;
    if (!isObj(entry)) return void issues.push({ path: p, message: 'expected an object' });
    const type = entry.tool_post_processor_type;
    if (type !== 'filter_dict' && type !== 'limit_strings') {
      return void issues.push({
        path: `${p}.tool_post_processor_type`,
        message: 'must be "filter_dict" or "limit_strings"',
      });
    }
    for (const k of [
      'exclude_tools',
      'only_include_tools',
      'exclude_manuals',
      'only_include_manuals',
      'exclude_keys',
      'only_include_keys',
    ]) {
      const v = entry[k];
      if (v !== undefined && v !== null && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) {
        issues.push({ path: `${p}.${k}`, message: 'expected an array of strings' });
      }
    }
    if (
      type === 'limit_strings' &&
      entry.limit !== undefined &&
      !(Number.isInteger(entry.limit) && (entry.limit as number) >= 0)
    ) {
      issues.push({ path: `${p}.limit`, message: 'expected a non-negative integer' });
    }
    configs.push(entry as unknown as PostProcessorConfig);
  });
  return { configs, issues };
}
