import type {
  CatalogChangeEvent,
  SaveManualInfo,
  SearchOptions,
  StoredManual,
  ToolRepository,
} from '../core/repository.js';
import type { CallTemplateBase, Tool, UtcpManual } from '../core/types.js';

/**
 * A repository whose implementation module is imported on first use, so configuring one (e.g. Postgres)
 * costs nothing until the client touches it, and clients that do not use it never load it.
 */
export class LazyToolRepository implements ToolRepository {
  readonly discoveryTtlMs?: number;
  readonly #load: () => Promise<ToolRepository>;
  readonly #listeners = new Set<(event: CatalogChangeEvent) => void>();
  #inner: Promise<ToolRepository> | undefined;
  #closed = false;

  constructor(load: () => Promise<ToolRepository>, discoveryTtlMs?: number) {
    this.#load = load;
    if (discoveryTtlMs !== undefined) this.discoveryTtlMs = discoveryTtlMs;
  }

  #repo(): Promise<ToolRepository> {
    this.#inner ??= this.#load().then(
      (repo) => {
        repo.subscribe?.((event) => {
          for (const l of this.#listeners) l(event);
        });
        return repo;
      },
      (error) => {
        this.#inner = undefined;
        throw error;
      },
    );
    return this.#inner;
  }

  async open(): Promise<void> {
    await (await this.#repo()).open?.();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    const inner = this.#inner;
    if (inner) await (await inner.catch(() => undefined))?.close?.();
  }

  subscribe(listener: (event: CatalogChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async saveManual(name: string, template: CallTemplateBase, manual: UtcpManual, info?: SaveManualInfo): Promise<void> {
    return (await this.#repo()).saveManual(name, template, manual, info);
  }
  async removeManual(name: string): Promise<boolean> {
    return (await this.#repo()).removeManual(name);
  }
  async getManual(name: string): Promise<StoredManual | undefined> {
    return (await this.#repo()).getManual(name);
  }
  async getManualInfo(name: string): Promise<Omit<StoredManual, 'manual'> | undefined> {
    const repo = await this.#repo();
    if (repo.getManualInfo) return repo.getManualInfo(name);
    const stored = await repo.getManual(name);
    if (!stored) return undefined;
    const { manual: _manual, ...info } = stored;
    return info;
  }
  async getManualNames(): Promise<string[]> {
    return (await this.#repo()).getManualNames();
  }
  async getTool(name: string): Promise<Tool | undefined> {
    return (await this.#repo()).getTool(name);
  }
  async getTools(): Promise<Tool[]> {
    return (await this.#repo()).getTools();
  }
  async searchTools(query: string, options: SearchOptions & { limit: number }): Promise<Tool[]> {
    return (await this.#repo()).searchTools(query, options);
  }
}
