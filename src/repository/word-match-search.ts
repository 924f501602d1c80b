/**
 * The official UTCP strategy `tag_and_description_word_match` (docs/design/manual-format.md#search),
 * with its two fixes: tool names are scored and `limit = 0` returns everything.
 */
import type { ToolSearchStrategy } from '../core/repository.js';
import type { Tool } from '../core/types.js';

export interface WordMatchOptions {
  /** @default 1 */
  description_weight?: number;
  /** @default 3 */
  tag_weight?: number;
}

const WORD = /[\p{L}\p{N}_]+/gu;

interface Entry {
  tool: Tool;
  tags: string[];
  tagWords: string[][];
  descWords: string[];
  nameTokens: string[];
}

function nameTokens(name: string): string[] {
  const dot = name.indexOf('.');
  const bare = dot === -1 ? name : name.slice(dot + 1);
  const words = bare
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return [...new Set(words.filter((w) => w.length > 2))];
}

export class WordMatchSearch implements ToolSearchStrategy {
  readonly #descWeight: number;
  readonly #tagWeight: number;
  #entries: Entry[] = [];

  constructor(options: WordMatchOptions = {}) {
    this.#descWeight = options.description_weight ?? 1;
    this.#tagWeight = options.tag_weight ?? 3;
  }

  add(tools: readonly Tool[]): void {
    for (const tool of tools) {
      const tags = tool.tags.map((t) => t.toLowerCase());
      this.#entries.push({
        tool,
        tags,
        tagWords: tags.map((t) => t.match(WORD) ?? []),
        descWords: [...new Set((tool.description.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 2))],
        nameTokens: nameTokens(tool.name),
      });
    }
  }

  remove(tools: readonly Tool[]): void {
    const gone = new Set(tools);
    this.#entries = this.#entries.filter((e) => !gone.has(e.tool));
  }

  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[] {
    const q = query.toLowerCase();
    const qwords = new Set(q.match(WORD) ?? []);
    const qparts = new Set(qwords);
    for (const w of qwords) for (const p of w.split('_')) if (p) qparts.add(p);
    const required =
      anyOfTagsRequired && anyOfTagsRequired.length > 0
        ? new Set(anyOfTagsRequired.map((t) => t.toLowerCase()))
        : undefined;
    const scored: { e: Entry; score: number; i: number }[] = [];
    this.#entries.forEach((e, i) => {
      if (required && !e.tags.some((t) => required.has(t))) return;
      let score = 0;
      e.tags.forEach((tag, j) => {
        if (q.includes(tag) || e.tagWords[j].some((w) => qwords.has(w))) score += this.#tagWeight;
      });
      for (const w of e.descWords) if (qwords.has(w)) score += this.#descWeight;
      for (const t of e.nameTokens) if (qparts.has(t)) score += this.#descWeight;
      scored.push({ e, score, i });
    });
    scored.sort((a, b) => b.score - a.score || a.i - b.i);
    const picked = limit === 0 ? scored : scored.slice(0, limit);
    return picked.map((s) => s.e.tool);
  }
}
