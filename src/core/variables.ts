/**
 * `${VAR}` / `$VAR` substitution with UTCP namespacing (docs/design/manual-format.md#variables).
 * Substitution always works on a copy; the repository only ever holds raw templates.
 */
import { UtcpError, UtcpVariableNotFoundError } from './errors.js';
import { MAX_TEMPLATE_NESTING_DEPTH, nestedTooDeep } from './nesting.js';

/** A source of variable values consulted after the config's `variables` (e.g. a dotenv file). */
export interface VariableSource {
  /** Returns the value, or undefined when this source does not define the key. */
  get(key: string): string | undefined;
}

const BRACED = /\$\{([A-Za-z0-9_]+)\}/g;
const ANY = /\$\{([A-Za-z0-9_]+)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const REF_GUARD = /\$ref(?![A-Za-z0-9_])/;
const CMD_OUTPUT = /^CMD_\d+_OUTPUT$/;
/** A config value that is exactly one reference, `${NAME}`: a remap to an un-namespaced source. */
const REMAP = /^\$\{([A-Za-z0-9_]+)\}$/;

/**
 * Variables referenced by a cli command are not written into the command text (where they would show in
 * the process list and in errors): the command gets `UTCP_VAR_<NAME>_UTCP_END` instead and the values
 * travel in this map, attached to the substituted template, for the transport to pass through the
 * environment (docs/design/threat-model.md#cli-secrets).
 */
export const DEFERRED_VARIABLES: unique symbol = Symbol('utcp-kit.deferredVariables');
export function deferredVariables(template: unknown): ReadonlyMap<string, string> | undefined {
  return (template as { [DEFERRED_VARIABLES]?: ReadonlyMap<string, string> } | null)?.[DEFERRED_VARIABLES];
}

/**
 * The namespaced lookup key: manual name with `_` doubled, then `_NAME`. One-to-one only because NAME may not
 * begin with `_` (docs/design/manual-format.md#variable-names): `gh` + `_prod_TOKEN` would be the key of
 * `gh_prod` + `TOKEN`, so such a reference is refused before any lookup.
 * @throws UtcpError INVALID_MANUAL for a name that begins with `_`
 */
export function namespacedKey(manualName: string, name: string): string {
  if (name.charCodeAt(0) === 95 /* _ */)
    throw new UtcpError(
      'INVALID_MANUAL',
      `Manual ${manualName} refers to the variable \${${name}}: a variable name may not begin with "_" (it would name another manual's variable)`,
    );
  return `${manualName.replace(/_/g, '__')}_${name}`;
}

/** Sanitises a manual name to `[A-Za-z0-9_]`. */
export function sanitizeManualName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Resolves namespaced keys: config variables, then sources in order, then the environment. */
export class VariableResolver {
  readonly #config: Record<string, string>;
  readonly #sources: readonly VariableSource[];
  readonly #env: NodeJS.ProcessEnv;

  constructor(
    config: Record<string, string> = {},
    sources: readonly VariableSource[] = [],
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.#config = config;
    this.#sources = sources;
    this.#env = env;
  }

  /**
   * Looks up a namespaced key. Throws `UtcpVariableNotFoundError` naming the key.
   * One pass: a value is never scanned for references again, so a secret holding `$NAME` stays literal.
   * The only exception is a config value that is exactly `${NAME}`, a remap to an un-namespaced source.
   */
  get(key: string): string {
    if (Object.prototype.hasOwnProperty.call(this.#config, key)) {
      const raw = this.#config[key];
      const remap = REMAP.exec(raw);
      if (!remap) return raw;
      const v = this.#fromSourcesOrEnv(remap[1]);
      if (v === undefined) throw new UtcpVariableNotFoundError(remap[1]);
      return v;
    }
    const v = this.#fromSourcesOrEnv(key);
    if (v === undefined) throw new UtcpVariableNotFoundError(key);
    return v;
  }

  has(key: string): boolean {
    try {
      this.get(key);
      return true;
    } catch {
      return false;
    }
  }

  #fromSourcesOrEnv(key: string): string | undefined {
    for (const source of this.#sources) {
      const v = source.get(key);
      if (v !== undefined && v !== '') return v;
    }
    const e = this.#env[key];
    return e !== undefined && e !== '' ? e : undefined;
  }
}

/** Per-field substitution rules of one template type. */
interface Rules {
  /** Only braced references; `${CMD_<n>_OUTPUT}` left alone (CLI commands). */
  bracedOnly?: boolean;
  /** Values are not written into the text: `UTCP_VAR_<NAME>_UTCP_END` marks them (CLI commands). */
  deferred?: boolean;
  skip?: boolean;
}

function rulesFor(templateType: string, path: readonly string[]): Rules {
  if (templateType === 'text' && path.length === 1 && path[0] === 'content') return { skip: true };
  // auth_tools is copied raw into generated tools and never used to reach the manual itself.
  if (path.length === 1 && path[0] === 'auth_tools') return { skip: true };
  if (templateType === 'cli' && path.length === 3 && path[0] === 'commands' && path[2] === 'command')
    return { bracedOnly: true, deferred: true };
  // GraphQL documents use `$name` for their own variables: only `${NAME}` is a UTCP variable there.
  if (templateType === 'graphql' && path.length === 1 && path[0] === 'query') return { bracedOnly: true };
  return {};
}

function substituteString(
  value: string,
  rules: Rules,
  lookup: (name: string) => string,
  defer: (name: string) => string,
): string {
  if (rules.skip || !value.includes('$') || REF_GUARD.test(value)) return value;
  if (rules.bracedOnly) {
    return value.replace(BRACED, (match, name: string) =>
      CMD_OUTPUT.test(name) ? match : rules.deferred ? defer(name) : lookup(name),
    );
  }
  return value.replace(ANY, (match, braced: string | undefined, bare: string | undefined) => lookup(braced ?? bare!));
}

function walk(
  value: unknown,
  templateType: string,
  path: string[],
  visit: (s: string, rules: Rules) => string,
): unknown {
  if (typeof value === 'string') return visit(value, rulesFor(templateType, path));
  // The recursion below is bounded: a manual's template nested deeper is refused (docs/design/threat-model.md#edges-and-nesting).
  if (typeof value === 'object' && value !== null && path.length >= MAX_TEMPLATE_NESTING_DEPTH)
    throw nestedTooDeep('call template', path);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      path.push(String(i));
      const v = walk(value[i], templateType, path, visit);
      path.pop();
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (typeof value === 'object' && value !== null) {
    if (path.length === 1 && rulesFor(templateType, path).skip) return value;
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      path.push(k);
      const nv = walk(v, templateType, path, visit);
      path.pop();
      if (nv !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = nv;
    }
    return out ?? value;
  }
  return value;
}

/**
 * Returns a copy of `template` with every variable reference replaced, looked up under the manual's namespace.
 * Unchanged sub-objects are shared with the input, which is never mutated.
 */
export function substituteTemplate<T>(
  template: T,
  manualName: string,
  resolver: VariableResolver,
  used?: Set<string>,
): T {
  const type = String((template as { call_template_type?: unknown }).call_template_type ?? '');
  const lookup = (name: string) => {
    const value = resolver.get(namespacedKey(manualName, name));
    used?.add(value);
    return value;
  };
  let deferred: Map<string, string> | undefined;
  const defer = (name: string) => {
    (deferred ??= new Map()).set(name, lookup(name));
    return `UTCP_VAR_${name}_UTCP_END`;
  };
  const out = walk(template, type, [], (s, rules) => substituteString(s, rules, lookup, defer)) as T;
  if (deferred && out !== template)
    Object.defineProperty(out, DEFERRED_VARIABLES, { value: deferred, enumerable: false });
  return out;
}

/** Lists the namespaced variable keys a template references, de-duplicated in first-seen order. */
export function collectTemplateVariables(template: unknown, manualName: string, into: string[] = []): string[] {
  const type = String((template as { call_template_type?: unknown } | null)?.call_template_type ?? '');
  const seen = new Set(into);
  const add = (name: string) => {
    const key = namespacedKey(manualName, name);
    if (!seen.has(key)) {
      seen.add(key);
      into.push(key);
    }
    return '';
  };
  walk(template, type, [], (s, rules) => {
    if (rules.skip || !s.includes('$') || REF_GUARD.test(s)) return s;
    if (rules.bracedOnly) s.replace(BRACED, (m, name: string) => (CMD_OUTPUT.test(name) ? m : add(name)));
    else s.replace(ANY, (m, braced: string | undefined, bare: string | undefined) => add(braced ?? bare!));
    return s;
  });
  return into;
}

/**
 * Substitutes `${VAR}` references (un-namespaced, braced only) in a client-level setting such as the
 * repository's connection string, from config variables, then sources, then the environment.
 */
export function resolveValue(value: string, resolver: VariableResolver): string {
  if (!value.includes('${')) return value;
  return value.replace(BRACED, (_match, name: string) => resolver.get(name));
}
