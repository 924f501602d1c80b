/**
 * `${VAR}` / `$VAR` substitution with UTCP namespacing (docs/design/manual-format.md#variables).
 * Substitution always works on a copy; the repository only ever holds raw templates.
 */
import { UtcpVariableNotFoundError } from './errors.js';

/** A source of variable values consulted after the config's `variables` (e.g. a dotenv file). */
export interface VariableSource {
  /** Returns the value, or undefined when this source does not define the key. */
  get(key: string): string | undefined;
}

const BRACED = /\$\{([A-Za-z0-9_]+)\}/g;
const ANY = /\$\{([A-Za-z0-9_]+)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const REF_GUARD = /\$ref(?![A-Za-z0-9_])/;
const CMD_OUTPUT = /^CMD_\d+_OUTPUT$/;

/** The namespaced lookup key: manual name with `_` doubled, then `_NAME`. */
export function namespacedKey(manualName: string, name: string): string {
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

  constructor(config: Record<string, string> = {}, sources: readonly VariableSource[] = [], env: NodeJS.ProcessEnv = process.env) {
    this.#config = config;
    this.#sources = sources;
    this.#env = env;
  }

  /** Looks up a namespaced key. Throws `UtcpVariableNotFoundError` naming the key. */
  get(key: string): string {
    if (Object.prototype.hasOwnProperty.call(this.#config, key)) {
      const raw = this.#config[key];
      // Config values may themselves reference un-namespaced sources/environment (remaps).
      return raw.includes('$') ? this.#preResolve(raw) : raw;
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

  #preResolve(value: string): string {
    if (REF_GUARD.test(value)) return value;
    return value.replace(ANY, (match, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare!;
      const v = this.#fromSourcesOrEnv(name);
      if (v === undefined) throw new UtcpVariableNotFoundError(name);
      return v;
    });
  }
}

/** Per-field substitution rules of one template type. */
interface Rules {
  /** Only braced references; `${CMD_<n>_OUTPUT}` left alone (CLI commands). */
  bracedOnly?: boolean;
  skip?: boolean;
}

function rulesFor(templateType: string, path: readonly string[]): Rules {
  if (templateType === 'text' && path.length === 1 && path[0] === 'content') return { skip: true };
  // auth_tools is copied raw into generated tools and never used to reach the manual itself.
  if (path.length === 1 && path[0] === 'auth_tools') return { skip: true };
  if (templateType === 'cli' && path.length === 3 && path[0] === 'commands' && path[2] === 'command') return { bracedOnly: true };
  // GraphQL documents use `$name` for their own variables: only `${NAME}` is a UTCP variable there.
  if (templateType === 'graphql' && path.length === 1 && path[0] === 'query') return { bracedOnly: true };
  return {};
}

function substituteString(value: string, rules: Rules, lookup: (name: string) => string): string {
  if (rules.skip || !value.includes('$') || REF_GUARD.test(value)) return value;
  if (rules.bracedOnly) {
    return value.replace(BRACED, (match, name: string) => (CMD_OUTPUT.test(name) ? match : lookup(name)));
  }
  return value.replace(ANY, (match, braced: string | undefined, bare: string | undefined) => lookup(braced ?? bare!));
}

function walk(value: unknown, templateType: string, path: string[], visit: (s: string, rules: Rules) => string): unknown {
  if (typeof value === 'string') return visit(value, rulesFor(templateType, path));
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
export function substituteTemplate<T>(template: T, manualName: string, resolver: VariableResolver): T {
  const type = String((template as { call_template_type?: unknown }).call_template_type ?? '');
  const lookup = (name: string) => resolver.get(namespacedKey(manualName, name));
  return walk(template, type, [], (s, rules) => substituteString(s, rules, lookup)) as T;
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
