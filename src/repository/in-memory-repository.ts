import type {
  CatalogChangeEvent,
  SaveManualInfo,
  SearchOptions,
  StoredManual,
  ToolRepository,
  ToolSearchStrategy,
} from '../core/repository.js';
import type { CallTemplateBase, Tool, UtcpManual } from '../core/types.js';

/** The default repository: tools in memory, indexed by the given search strategy. */
export class InMemoryToolRepository implements ToolRepository {
  readonly #manuals = new Map<string, StoredManual>();
  readonly #tools = new Map<string, Tool>();
  readonly #search: ToolSearchStrategy;
  readonly #listeners = new Set<(event: CatalogChangeEvent) => void>();

  constructor(search: ToolSearchStrategy) {
    this.#search = search;
  }

  async saveManual(name: string, template: CallTemplateBase, manual: UtcpManual, info?: SaveManualInfo): Promise<void> {
    const old = this.#manuals.get(name);
    if (old) this.#drop(old);
    this.#manuals.set(name, {
      template,
      manual,
      savedAt: Date.now(),
      ...(info?.allowedProtocols ? { allowedProtocols: [...info.allowedProtocols] } : {}),
    });
    const tools = manual.tools;
    for (let i = 0; i < tools.length; i++) this.#tools.set(tools[i].name, tools[i]);
    this.#search.add(manual.tools);
    this.#emit({ kind: 'saved', manualName: name, local: true });
  }

  /** Local changes only: this store is not shared with other processes. */
  subscribe(listener: (event: CatalogChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: CatalogChangeEvent): void {
    for (const l of this.#listeners) l(event);
  }

  async removeManual(name: string): Promise<boolean> {
    const old = this.#manuals.get(name);
    if (!old) return false;
    this.#drop(old);
    this.#manuals.delete(name);
    this.#emit({ kind: 'removed', manualName: name, local: true });
    return true;
  }

  #drop(stored: StoredManual): void {
    for (const tool of stored.manual.tools) this.#tools.delete(tool.name);
    this.#search.remove(stored.manual.tools);
  }

  async getManual(name: string): Promise<StoredManual | undefined> {
    return this.#manuals.get(name);
  }

  async getManualNames(): Promise<string[]> {
    return [...this.#manuals.keys()];
  }

  async getTool(name: string): Promise<Tool | undefined> {
    return this.#tools.get(name);
  }

  async getTools(): Promise<Tool[]> {
    return [...this.#tools.values()];
  }

  async searchTools(query: string, options: SearchOptions & { limit: number }): Promise<Tool[]> {
    return this.#search.search(query, options.limit, options.anyOfTagsRequired);
  }

  /** Stops the search index's background work (an unfinished build's idle steps); the tools stay readable. */
  async close(): Promise<void> {
    this.#search.close?.();
  }
}
