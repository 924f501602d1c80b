/**
 * The tool store behind an async interface, so other stores can plug in later,
 * and the search strategy contract.
 */
import type { CallTemplateBase, Tool, UtcpManual } from './types.js';

export interface SearchOptions {
  /** Maximum results; 0 returns all matches. @default 10 */
  limit?: number;
  /** Keep only tools having at least one of these tags (case-insensitive). */
  anyOfTagsRequired?: string[] | null;
}

export interface StoredManual {
  /** The raw manual call template (never substituted). */
  template: CallTemplateBase;
  manual: UtcpManual;
  /** When the manual was stored (ms since the epoch), for stores that keep it (the discovery cache uses it). */
  savedAt?: number;
  /** The protocols its tools were checked against at registration, for stores shared between clients. */
  allowedProtocols?: string[];
}

/** What else `saveManual` may record next to the manual. */
export interface SaveManualInfo {
  /** The protocols the registering client allowed for this manual's tools. */
  allowedProtocols?: readonly string[];
}

/**
 * A change to the stored catalog (see docs/design/repository-postgres.md). `resync` means changes may have been
 * missed (a listener connection was lost and re-established): drop anything cached about the catalog.
 */
export interface CatalogChangeEvent {
  kind: 'saved' | 'removed' | 'resync';
  /** The manual saved or removed (absent for `resync`). */
  manualName?: string;
  /** True when this repository instance made the change itself. */
  local: boolean;
}

export interface ToolRepository {
  /** Stores a manual and all its tools at once, replacing any manual of the same name. */
  saveManual(name: string, template: CallTemplateBase, manual: UtcpManual, info?: SaveManualInfo): Promise<void>;
  /** Removes a manual and its tools. Returns false when unknown. */
  removeManual(name: string): Promise<boolean>;
  getManual(name: string): Promise<StoredManual | undefined>;
  getManualNames(): Promise<string[]>;
  getTool(name: string): Promise<Tool | undefined>;
  getTools(): Promise<Tool[]>;
  searchTools(query: string, options: Required<Pick<SearchOptions, 'limit'>> & SearchOptions): Promise<Tool[]>;

  // Optional hooks for stores that live outside the process (shared catalogs):
  /** The manual's template and metadata without its tools (cheaper than `getManual` for large manuals). */
  getManualInfo?(name: string): Promise<Omit<StoredManual, 'manual'> | undefined>;
  /** Connects and prepares the store; the client awaits it before registering its config's manuals. */
  open?(): Promise<void>;
  /** Releases connections; called by `client.close()` when the client created the repository from its config. */
  close?(): Promise<void>;
  /** Calls `listener` on every change to the catalog, including changes made by other processes. Returns an unsubscribe function. */
  subscribe?(listener: (event: CatalogChangeEvent) => void): () => void;
  /**
   * When set, the store is shared: registering a manual whose stored template is identical reuses the stored
   * manual instead of discovering again, while it is younger than this many milliseconds (0: never reuse).
   */
  readonly discoveryTtlMs?: number;
}

/** A search index kept in step with the repository. */
export interface ToolSearchStrategy {
  add(tools: readonly Tool[]): void;
  remove(tools: readonly Tool[]): void;
  /** `limit` 0 means all matches. */
  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[];
  /** Stops work the index does in the background (the repository's `close` calls it). Searching still works after. */
  close?(): void;
}
