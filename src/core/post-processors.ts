/**
 * Post-processors applied in order to every tool result and stream item (docs/design/manual-format.md#post-processors):
 * `filter_dict` and `limit_strings` from the config, plus user-supplied functions.
 */
import { UtcpLimitError, type ValidationIssue } from './errors.js';
import type { Tool } from './types.js';
import { isPlainObject as isObj } from './guards.js';

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

const isEmptyContainer = (v: unknown) => (Array.isArray(v) ? v.length === 0 : isObj(v) && Object.keys(v).length === 0);

type Container = unknown[] | Record<string, unknown>;
const isContainer = (v: unknown): v is Container => typeof v === 'object' && v !== null;

/**
 * How deep a result the post-processors walk: a deeper one fails with `UtcpLimitError` (`max_nesting_depth`), since
 * returning it unfiltered would skip the filter (docs/design/threat-model.md#edges-and-nesting).
 */
export const MAX_RESULT_NESTING_DEPTH = 10_000;

/** One rule set of the walk below. `key` is the entry's key in an object, undefined in an array. */
interface Rules {
  /** What becomes of an entry: dropped, kept through `leaf`, or walked into (containers only). */
  visit(value: unknown, key: string | undefined): 'drop' | 'leaf' | 'walk';
  leaf(value: unknown): unknown;
  /** Whether a walked container's result stays in its parent. */
  keep(result: Container, key: string | undefined): boolean;
}

interface Frame {
  source: object;
  /** The array itself, or the object's entries. */
  items: readonly unknown[];
  isArray: boolean;
  i: number;
  out: Container;
  key: string | undefined;
}

function put(frame: Frame, key: string | undefined, value: unknown): void {
  if (frame.isArray) (frame.out as unknown[]).push(value);
  else if (key === '__proto__')
    Object.defineProperty(frame.out, key, { value, enumerable: true, writable: true, configurable: true });
  else (frame.out as Record<string, unknown>)[key as string] = value;
}

/**
 * A transformed copy of `root`, walked with an explicit stack (no recursion: a result nested 100,000 deep is data a
 * server controls). A container met again inside itself (a cycle) or nesting past MAX_RESULT_NESTING_DEPTH fails.
 */
function transform(root: unknown, rules: Rules, what: () => string): unknown {
  if (!isContainer(root)) return rules.leaf(root);
  const onPath = new Set<object>();
  const stack: Frame[] = [];
  const open = (source: Container, key: string | undefined): void => {
    if (onPath.has(source)) throw new UtcpLimitError('max_nesting_depth', `${what()}: the result contains itself`);
    if (stack.length >= MAX_RESULT_NESTING_DEPTH)
      throw new UtcpLimitError(
        'max_nesting_depth',
        `${what()}: the result is nested deeper than ${MAX_RESULT_NESTING_DEPTH} levels`,
      );
    onPath.add(source);
    const isArray = Array.isArray(source);
    stack.push({
      source,
      items: isArray ? source : Object.entries(source),
      isArray,
      i: 0,
      out: isArray ? [] : {},
      key,
    });
  };
  open(root, undefined);
  for (;;) {
    const top = stack[stack.length - 1];
    if (top.i < top.items.length) {
      const item = top.items[top.i++];
      const key = top.isArray ? undefined : (item as [string, unknown])[0];
      const value = top.isArray ? item : (item as [string, unknown])[1];
      const step = rules.visit(value, key);
      if (step === 'walk') open(value as Container, key);
      else if (step === 'leaf') put(top, key, rules.leaf(value));
      continue;
    }
    stack.pop();
    onPath.delete(top.source);
    const parent = stack[stack.length - 1];
    if (!parent) return top.out;
    if (rules.keep(top.out, top.key)) put(parent, top.key, top.out);
  }
}

const same = (value: unknown) => value;

/** Drops the `keys` entries of every object; an array item that ends up an empty container is dropped too. */
function excludeKeys(keys: ReadonlySet<string>): Rules {
  return {
    visit: (value, key) => (key !== undefined && keys.has(key) ? 'drop' : isContainer(value) ? 'walk' : 'leaf'),
    leaf: same,
    keep: (result, key) => key !== undefined || !isEmptyContainer(result),
  };
}

/**
 * Keeps the `keys` entries (whole) and the containers that still hold some after filtering; array items that are not
 * containers are dropped.
 */
function onlyInclude(keys: ReadonlySet<string>): Rules {
  return {
    visit: (value, key) => (isContainer(value) ? 'walk' : key !== undefined && keys.has(key) ? 'leaf' : 'drop'),
    leaf: same,
    keep: (result, key) => (key !== undefined && keys.has(key)) || !isEmptyContainer(result),
  };
}

function limitString(value: string, limit: number): string {
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

function limitStrings(limit: number): Rules {
  return {
    visit: (value) => (isContainer(value) ? 'walk' : 'leaf'),
    leaf: (value) => (typeof value === 'string' ? limitString(value, limit) : value),
    keep: () => true,
  };
}

/** Builds a post-processor function from one config entry. */
export function postProcessorFromConfig(cfg: PostProcessorConfig): PostProcessorFn {
  switch (cfg.tool_post_processor_type) {
    case 'filter_dict': {
      const exclude = cfg.exclude_keys ? new Set(cfg.exclude_keys) : undefined;
      const include = cfg.only_include_keys ? new Set(cfg.only_include_keys) : undefined;
      const excluding = exclude && excludeKeys(exclude);
      const including = include && onlyInclude(include);
      return (result, ctx) => {
        if (!applies(cfg, ctx)) return result;
        const what = () => `filter_dict post-processor on the result of ${ctx.tool.name}`;
        let r = result;
        if (excluding) r = transform(r, excluding, what);
        if (including) r = transform(r, including, what);
        return r;
      };
    }
    case 'limit_strings': {
      const rules = limitStrings(cfg.limit ?? 10_000);
      return (result, ctx) =>
        applies(cfg, ctx)
          ? transform(result, rules, () => `limit_strings post-processor on the result of ${ctx.tool.name}`)
          : result;
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
