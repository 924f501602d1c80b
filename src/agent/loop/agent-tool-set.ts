import { UtcpError, type Tool, type UtcpClient } from '../../index.js';
import type { ModelToolDefinition } from '../chat-model.js';
import { matchGlob } from './match-glob.js';
import { SEARCH_TOOLS_NAME, searchToolsDefinition } from './search-tools-tool.js';
import { toolDefinition } from '../export/tool-definitions.js';
import type { ToolNameCodec } from '../export/tool-names.js';

/** Which registered tools an agent may use: names or globs (`github.*`), or a predicate. */
export type ToolSelection = readonly string[] | ((tool: Tool) => boolean);

/** Providers reject requests with more tools than this. */
export const MAX_TOOLS_PER_REQUEST = 128;

function selects(selection: ToolSelection | undefined, tool: Tool): boolean {
  if (selection === undefined) return true;
  if (typeof selection === 'function') return selection(tool);
  return selection.some((pattern) => matchGlob(pattern, tool.name));
}

/**
 * @internal The tools one run may use, snapshotted at its start. Up to `inlineLimit` tools are all sent every turn;
 * past that only `search_tools` and the tools found so far are (deferred loading), the oldest dropped beyond the limit.
 */
export class AgentToolSet {
  readonly #all: ReadonlyMap<string, Tool>;
  readonly #restricted: boolean;
  readonly #inlineLimit: number;
  readonly #names: ToolNameCodec;
  readonly #maxDescriptionChars: number;
  readonly #loaded = new Set<string>();
  /** The code-mode tool when the run is in code mode (docs/design/code-mode.md#agent). */
  readonly codeModeTool: Tool | undefined;

  private constructor(
    all: Map<string, Tool>,
    restricted: boolean,
    inlineLimit: number,
    names: ToolNameCodec,
    maxDescriptionChars: number,
    codeModeTool?: Tool,
  ) {
    this.codeModeTool = codeModeTool;
    this.#all = all;
    this.#restricted = restricted;
    this.#inlineLimit = inlineLimit;
    this.#names = names;
    this.#maxDescriptionChars = maxDescriptionChars;
  }

  static async create(
    client: Pick<UtcpClient, 'getTools'>,
    options: {
      selection?: ToolSelection;
      inlineLimit: number;
      names: ToolNameCodec;
      maxDescriptionChars: number;
      codeModeTool?: string;
    },
  ): Promise<AgentToolSet> {
    const all = new Map<string, Tool>();
    const catalog = await client.getTools();
    for (const tool of catalog) if (selects(options.selection, tool)) all.set(tool.name, tool);
    let codeMode: Tool | undefined;
    if (options.codeModeTool !== undefined) {
      codeMode = catalog.find((t) => t.name === options.codeModeTool);
      if (!codeMode)
        throw new UtcpError(
          'INVALID_CONFIG',
          `runAgent: codeModeTool "${options.codeModeTool}" is not a registered tool (register it with registerCodeMode from utcp-kit/code-mode)`,
        );
      all.set(codeMode.name, codeMode);
    }
    const inlineLimit = Math.min(options.inlineLimit, MAX_TOOLS_PER_REQUEST - 1);
    return new AgentToolSet(
      all,
      options.selection !== undefined,
      inlineLimit,
      options.names,
      options.maxDescriptionChars,
      codeMode,
    );
  }

  /** True when the catalog is too large to send whole and the model searches it instead. */
  get deferred(): boolean {
    return this.#all.size > this.#inlineLimit;
  }

  get size(): number {
    return this.#all.size;
  }

  /** The tool a model-side name refers to: an encoded name, or the exact client name. */
  resolve(modelName: string): Tool | undefined {
    return this.#all.get(this.#names.decode(modelName) ?? modelName);
  }

  /** The client name to store for a name the model used (unknown names are kept as they are). */
  clientName(modelName: string): string {
    return this.resolve(modelName)?.name ?? modelName;
  }

  /** The name the model knows a stored name by; names the model made up are sent back as it wrote them. */
  modelName(storedName: string): string {
    return this.#all.has(storedName) ? this.#names.encode(storedName) : storedName;
  }

  /** The definitions to send this turn. */
  definitions(): ModelToolDefinition[] {
    if (this.codeModeTool)
      return [
        searchToolsDefinition(this.#all.size, this.#names.encode(this.codeModeTool.name)),
        toolDefinition(this.codeModeTool, this.#names, this.#maxDescriptionChars),
      ];
    const tools = this.deferred ? [...this.#loaded].map((n) => this.#all.get(n)!) : [...this.#all.values()];
    const defs = tools.map((t) => toolDefinition(t, this.#names, this.#maxDescriptionChars));
    return this.deferred ? [searchToolsDefinition(this.#all.size), ...defs] : defs;
  }

  /** True when `name` is the search meta tool of this run. */
  isSearchTool(name: string): boolean {
    return (this.deferred || this.codeModeTool !== undefined) && name === SEARCH_TOOLS_NAME;
  }

  /** Ranked search within this run's tools; the tools found are sent from the next turn on. */
  async search(client: Pick<UtcpClient, 'searchTools'>, query: string, limit: number): Promise<Tool[]> {
    const hits = await client.searchTools(query, { limit: this.#restricted ? 0 : limit });
    const found = hits.filter((t) => this.#all.has(t.name)).slice(0, limit);
    for (const tool of found) {
      this.#loaded.delete(tool.name);
      this.#loaded.add(tool.name);
    }
    for (const name of this.#loaded) {
      if (this.#loaded.size <= this.#inlineLimit) break;
      this.#loaded.delete(name);
    }
    return found;
  }

  /** The tools found by search so far, oldest first (a paused run stores them). */
  loadedNames(): string[] {
    return [...this.#loaded];
  }

  /**
   * Restores the tools found before a pause, the newest `inlineLimit` of them; names outside this run's tools are
   * skipped (the list comes from a state that may have been changed).
   */
  restoreLoaded(names: readonly string[]): void {
    for (const name of names) {
      if (!this.#all.has(name)) continue;
      this.#loaded.delete(name);
      this.#loaded.add(name);
    }
    for (const name of this.#loaded) {
      if (this.#loaded.size <= this.#inlineLimit) break;
      this.#loaded.delete(name);
    }
  }

  /** Marks a called tool as recently used, so it is the last to be dropped. */
  touch(name: string): void {
    if (!this.#loaded.has(name)) return;
    this.#loaded.delete(name);
    this.#loaded.add(name);
  }
}
