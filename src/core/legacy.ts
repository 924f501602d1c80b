/**
 * Normalisation of legacy v0.1 ("provider") manuals, templates and configs into UTCP 1.x
 * (docs/design/manual-format.md#legacy). Core does the type-independent part (the type key, auth objects, the
 * manual shape); the type-specific rewrites belong to each transport's template spec (`legacy`, `legacyTypes`)
 * and reach this module through `LegacyHooks`. Inputs are never mutated; every rewrite is reported.
 */
import type { CallTemplateSpec } from './template.js';
import { isPlainObject as isObj } from './guards.js';

type Obj = Record<string, unknown>;

/** What the transports contribute (the client's template registry implements it). */
export interface LegacyHooks {
  /** Old type names → current `call_template_type` (e.g. `http_sse` → `sse`). */
  readonly typeAliases?: Readonly<Record<string, string>>;
  /** The loaded spec of a type, if any: its `legacy` rewrite and `inheritsManualTemplate`. */
  spec?(type: string): Pick<CallTemplateSpec, 'legacy' | 'inheritsManualTemplate' | 'inlineToolTemplate'> | undefined;
}

function normalizeAuth(auth: unknown, notes: string[], where: string): unknown {
  if (!isObj(auth)) return auth;
  let out: Obj = auth;
  const copy = () => (out === auth ? (out = { ...auth }) : out);
  if (out.auth_type === undefined && typeof out.type === 'string') {
    copy();
    out.auth_type = out.type;
    delete out.type;
    notes.push(`${where}: legacy auth "type" renamed to "auth_type"`);
  }
  if (out.auth_type === 'api_key') {
    if (out.location === undefined && typeof out.in === 'string') {
      copy();
      out.location = out.in;
      delete out.in;
    }
  }
  return out;
}

/** The first of two keys that `o` has a value for, or undefined. */
function firstPresent(o: Obj, a: string, b: string): string | undefined {
  return o[a] !== undefined ? a : o[b] !== undefined ? b : undefined;
}

/** A copy of `o` with the key `from` renamed to `to` (a legacy field name); `o` itself is not changed. */
function renamed(o: Obj, from: string, to: string): Obj {
  const out: Obj = { ...o, [to]: o[from] };
  delete out[from];
  return out;
}

/** Normalises one call template / v0.1 provider object. Returns the input itself when nothing changed. */
export function normalizeCallTemplate(
  value: unknown,
  notes: string[] = [],
  where = 'call template',
  hooks?: LegacyHooks,
): unknown {
  if (!isObj(value)) return value;
  // No closure per call (a manual normalises every tool's template): `out` becomes a copy at the first change.
  let out: Obj = value;
  if (out.call_template_type === undefined) {
    const alias = firstPresent(out, 'provider_type', 'type');
    if (alias) {
      out = renamed(value, alias, 'call_template_type');
      notes.push(`${where}: legacy "${alias}" renamed to "call_template_type"`);
    }
  }
  const type = out.call_template_type;
  const current = typeof type === 'string' ? hooks?.typeAliases?.[type] : undefined;
  if (current !== undefined) {
    if (out === value) out = { ...value };
    out.call_template_type = current;
    notes.push(`${where}: legacy type "${String(type)}" mapped to "${current}"`);
  }
  // The owning transport's rewrites; one may hand the template to another type (text + file_path → file).
  for (let hop = 0; hop < 4 && typeof out.call_template_type === 'string'; hop++) {
    const before = out.call_template_type;
    const rewrite = hooks?.spec?.(before)?.legacy;
    if (!rewrite) break;
    const next = rewrite(out, notes, where);
    if (next !== out) out = next;
    if (out.call_template_type === before) break;
  }
  if (out.auth !== undefined) {
    const auth = normalizeAuth(out.auth, notes, where);
    if (auth !== out.auth) {
      if (out === value) out = { ...value };
      out.auth = auth;
    }
  }
  return out;
}

/** The provider type a manual document declares at its top (`type`/`provider_type`, as go-utcp provider files do). */
export function documentType(doc: unknown): string | undefined {
  if (!isObj(doc)) return undefined;
  for (const key of ['call_template_type', 'provider_type', 'type'])
    if (typeof doc[key] === 'string') return doc[key] as string;
  return undefined;
}

/** One tool of `normalizeManual`: the input itself when nothing changed, else a copy. */
function normalizeTool(
  tool: unknown,
  i: number,
  inherit: Obj | undefined,
  inline: ((tool: Obj) => Obj | undefined) | undefined,
  hooks: LegacyHooks | undefined,
  notes: string[],
  own: string[],
  toolNotes: [message: string | undefined, note: string][],
): unknown {
  if (!isObj(tool)) return tool;
  let t: Obj = tool;
  if (t.tool_call_template === undefined) {
    const alias = firstPresent(t, 'tool_provider', 'provider');
    if (alias) {
      t = renamed(tool, alias, 'tool_call_template');
    } else if (inherit) {
      t = { ...tool, tool_call_template: inherit };
    } else {
      const template = inline?.(t);
      if (template) {
        t = { ...tool, tool_call_template: template };
        notes.push(
          `tools[${i}]: call fields written on the tool (${String(template.call_template_type)} provider dialect) read as its tool_call_template`,
        );
      }
    }
  }
  if (t.inputs === undefined && t.parameters !== undefined) t = renamed(t, 'parameters', 'inputs');
  const template = t.tool_call_template;
  if (template !== undefined && template !== inherit) {
    const where = `tools[${i}].tool_call_template`;
    own.length = 0;
    const tpl = normalizeCallTemplate(template, own, where, hooks);
    for (let k = 0; k < own.length; k++) {
      const note = own[k];
      toolNotes.push([note.startsWith(`${where}: `) ? note.slice(where.length + 2) : undefined, note]);
    }
    if (tpl !== template) {
      if (t === tool) t = { ...tool };
      t.tool_call_template = tpl;
    }
  }
  return t;
}

/**
 * Normalises a discovered manual: `version` → `utcp_version`, `tool_provider`/`provider` → `tool_call_template`,
 * `parameters` → `inputs`, and (for types whose spec says `inheritsManualTemplate`) tools without a template
 * inherit `manualTemplate`.
 */
export function normalizeManual(
  value: unknown,
  manualTemplate: Obj | undefined,
  notes: string[] = [],
  hooks?: LegacyHooks,
): unknown {
  if (!isObj(value)) return value;
  const out: Obj = { ...value };
  if (out.utcp_version === undefined && typeof out.version === 'string') out.utcp_version = out.version;
  if (!Array.isArray(out.tools)) return out;
  const manualType = manualTemplate ? String(manualTemplate.call_template_type) : undefined;
  const inherit =
    manualType !== undefined && hooks?.spec?.(manualType)?.inheritsManualTemplate ? manualTemplate : undefined;
  // A provider file (go-utcp) names its type at the top and writes each tool's call fields inline.
  const inline = hooks?.spec?.(documentType(out) ?? manualType ?? '')?.inlineToolTemplate;
  const toolNotes: [message: string | undefined, note: string][] = [];
  // An indexed loop calling one function per tool, with one notes array reused: no callback, closure or array per
  // tool (docs/design/performance.md#cold-registration).
  const listed = out.tools;
  const tools: unknown[] = new Array(listed.length);
  const own: string[] = [];
  for (let i = 0; i < listed.length; i++)
    tools[i] = normalizeTool(listed[i], i, inherit, inline, hooks, notes, own, toolNotes);
  out.tools = tools;
  // A note repeated by many tools (a converted spec has hundreds) is reported once, with the count.
  const counts = new Map<string, number>();
  for (const [message] of toolNotes) if (message !== undefined) counts.set(message, (counts.get(message) ?? 0) + 1);
  for (const [message, note] of toolNotes) {
    const n = message === undefined ? 1 : counts.get(message);
    if (n === 1) notes.push(note);
    else if (n !== undefined) {
      notes.push(`${n} tool templates: ${message}`);
      counts.delete(message!);
    }
  }
  return out;
}
