/** How tool names become script names: `manual.tool` → the global `manual`, its function `tool`. */
import type { Tool } from '../index.js';

/** Which tools a script may call: names or globs (`github.*`), or a predicate. */
export type CodeToolSelection = readonly string[] | ((tool: Tool) => boolean);

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** True when `name` can be written bare in JavaScript (`manual.tool`), not only quoted (`manual['my-tool']`). */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/**
 * The global a tool's manual lives under and the tool's key in it. The manual is the part before the first dot,
 * made an identifier (`my-api` → `my_api`); the key is the rest, as is.
 */
export function manualAccess(toolName: string): { manual: string; key: string } {
  const dot = toolName.indexOf('.');
  const manual = dot < 0 ? 'tools' : toolName.slice(0, dot);
  const key = dot < 0 ? toolName : toolName.slice(dot + 1);
  let id = manual.replace(/[^\w$]/g, '_');
  if (!/^[A-Za-z_$]/.test(id)) id = `_${id}`;
  return { manual: id, key };
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${body}$`);
}

/** The tools `selection` picks, in catalog order. */
export function selectTools(all: readonly Tool[], selection: CodeToolSelection | undefined): Tool[] {
  if (selection === undefined) return [...all];
  if (typeof selection === 'function') return all.filter((t) => selection(t));
  const patterns = selection.map(globToRegExp);
  return all.filter((t) => patterns.some((p) => p.test(t.name)));
}
