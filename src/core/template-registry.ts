/**
 * The call template types one client knows: for each, its transport definition and, once loaded, its compiled
 * template spec. Implements the lookups validation (validate.ts) and legacy normalisation (legacy.ts) need.
 */
import { UtcpError } from './errors.js';
import type { LegacyHooks } from './legacy.js';
import type { CallTemplateSpec, CompiledTemplate } from './template.js';
import { compileTemplate } from './template-validator.js';
import type { TransportDefinition, TransportFactory } from './transport.js';
import type { TemplateLookup } from './validate.js';

/** A plain factory (no template spec) or a full definition. */
export type TransportEntry = TransportFactory | TransportDefinition;

export function toDefinition(entry: TransportEntry): TransportDefinition {
  return typeof entry === 'function' ? { create: entry } : entry;
}

export class TemplateRegistry implements TemplateLookup, LegacyHooks {
  readonly #definitions: ReadonlyMap<string, TransportDefinition>;
  readonly #compiled = new Map<string, CompiledTemplate>();
  readonly #loading = new Map<string, Promise<void>>();
  readonly typeAliases: Readonly<Record<string, string>>;

  constructor(entries: Record<string, TransportEntry>) {
    const definitions = new Map<string, TransportDefinition>();
    const aliases: Record<string, string> = {};
    for (const [type, entry] of Object.entries(entries)) {
      const definition = toDefinition(entry);
      definitions.set(type, definition);
      for (const old of definition.legacyTypes ?? []) aliases[old] = type;
    }
    for (const type of definitions.keys()) delete aliases[type];
    this.#definitions = definitions;
    this.typeAliases = aliases;
  }

  get types(): string[] {
    return [...this.#definitions.keys()];
  }

  definition(type: string): TransportDefinition | undefined {
    return this.#definitions.get(type);
  }

  isKnown(type: string): boolean {
    return this.#definitions.has(type);
  }

  /** True when `type` has a template spec that is not loaded yet. */
  needsLoad(type: unknown): type is string {
    return typeof type === 'string' && this.#definitions.get(type)?.template !== undefined && !this.#compiled.has(type);
  }

  /** Loads and compiles the spec of `type` (once). Unknown types and types without a spec are a no-op. */
  load(type: string): Promise<void> {
    if (!this.needsLoad(type)) return Promise.resolve();
    let loading = this.#loading.get(type);
    if (!loading) {
      const definition = this.#definitions.get(type)!;
      loading = Promise.resolve()
        .then(() => definition.template!())
        .then((spec: CallTemplateSpec) => {
          if (spec.type !== type)
            throw new UtcpError(
              'INVALID_CONFIG',
              `The template spec registered for "${type}" describes "${spec.type}"`,
            );
          return compileTemplate(spec, definition.precompiledTemplate?.bind(definition));
        })
        .then((c) => void this.#compiled.set(type, c))
        .finally(() => this.#loading.delete(type));
      this.#loading.set(type, loading);
    }
    return loading;
  }

  /**
   * Runs `run` until every type it reports is loaded (legacy rewrites may reveal new types). `seed` names types
   * to load before the first run: without it, a cold client ran `run` (normalising every tool of a manual) twice.
   */
  async prepared<R>(run: () => R, typesOf: (result: R) => Iterable<unknown>, seed?: Iterable<unknown>): Promise<R> {
    if (seed) {
      const missing = [...new Set(seed)].filter((t) => this.needsLoad(t)) as string[];
      if (missing.length > 0) await Promise.all(missing.map((t) => this.load(t)));
    }
    for (;;) {
      const result = run();
      const missing = [...new Set(typesOf(result))].filter((t) => this.needsLoad(t)) as string[];
      if (missing.length === 0) return result;
      await Promise.all(missing.map((t) => this.load(t)));
    }
  }

  compiled(type: string): CompiledTemplate | undefined {
    if (this.needsLoad(type))
      throw new Error(`Internal error: the template spec of "${type}" was not loaded before validation`);
    return this.#compiled.get(type);
  }

  spec(type: string): CallTemplateSpec | undefined {
    return this.#compiled.get(type)?.spec;
  }
}
