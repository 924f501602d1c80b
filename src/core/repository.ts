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
}

export interface ToolRepository {
  /** Stores a manual and all its tools at once, replacing any manual of the same name. */
  saveManual(name: string, template: CallTemplateBase, manual: UtcpManual): Promise<void>;
  /** Removes a manual and its tools. Returns false when unknown. */
  removeManual(name: string): Promise<boolean>;
  getManual(name: string): Promise<StoredManual | undefined>;
  getManualNames(): Promise<string[]>;
  getTool(name: string): Promise<Tool | undefined>;
  getTools(): Promise<Tool[]>;
  searchTools(query: string, options: Required<Pick<SearchOptions, 'limit'>> & SearchOptions): Promise<Tool[]>;
}

/** A search index kept in step with the repository. */
export interface ToolSearchStrategy {
  add(tools: readonly Tool[]): void;
  remove(tools: readonly Tool[]): void;
  /** `limit` 0 means all matches. */
  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[];
}
