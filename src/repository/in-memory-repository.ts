import type { SearchOptions, StoredManual, ToolRepository, ToolSearchStrategy } from '../core/repository.js';
import type { CallTemplateBase, Tool, UtcpManual } from '../core/types.js';

/** The default repository: tools in memory, indexed by the given search strategy. */
export class InMemoryToolRepository implements ToolRepository {
  readonly #manuals = new Map<string, StoredManual>();
  readonly #tools = new Map<string, Tool>();
  readonly #search: ToolSearchStrategy;

  constructor(search: ToolSearchStrategy) {
    this.#search = search;
  }

  async saveManual(name: string, template: CallTemplateBase, manual: UtcpManual): Promise<void> {
    const old = this.#manuals.get(name);
    if (old) this.#drop(old);
    this.#manuals.set(name, { template, manual });
    for (const tool of manual.tools) this.#tools.set(tool.name, tool);
    this.#search.add(manual.tools);
  }

  async removeManual(name: string): Promise<boolean> {
    const old = this.#manuals.get(name);
    if (!old) return false;
    this.#drop(old);
    this.#manuals.delete(name);
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
}
