/**
 * The default search: ranked full-text search (BM25F) over tool name, description and tags,
 * with an inverted index maintained incrementally as manuals come and go.
 */
import type { ToolSearchStrategy } from '../core/repository.js';
import type { Tool } from '../core/types.js';

export interface Bm25Options {
  /** Weight of a term in the tool name (after the manual prefix). @default 3 */
  nameWeight?: number;
  /** @default 1 */
  descriptionWeight?: number;
  /** @default 3 */
  tagWeight?: number;
  /** Weight of the manual name. @default 0.5 */
  manualWeight?: number;
  /** BM25 term-frequency saturation. @default 1.2 */
  k1?: number;
  /** BM25 length normalisation. @default 0.75 */
  b?: number;
}

const STOPWORDS = new Set([
  'a',
  'an',
  'the',
  'of',
  'to',
  'for',
  'and',
  'or',
  'in',
  'on',
  'at',
  'by',
  'with',
  'from',
  'is',
  'are',
  'be',
  'it',
  'its',
  'this',
  'that',
  'as',
  'me',
  'my',
  'i',
  'you',
  'your',
  'can',
  'will',
  'into',
  'about',
  'which',
  'what',
]);

/** A light English stemmer: enough to match "forecasts" with "forecast" and "listing" with "list". */
export function stem(word: string): string {
  const n = word.length;
  if (n <= 3) return word;
  if (word.endsWith('ies') && n > 4) return word.slice(0, -3) + 'y';
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && n > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && n > 4 && !word.endsWith('eed')) return word.slice(0, -2);
  if (word.endsWith('es') && n > 4 && /(?:ch|sh|x|z|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is'))
    return word.slice(0, -1);
  return word;
}

/**
 * Splits text into search terms: camelCase and snake_case split, lowercased, stop words dropped, stemmed.
 * A hand-written scanner (ASCII fast path, Unicode letters and digits kept) because registration tokenizes every tool.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (!text) return out;
  let start = -1;
  let prevLowerOrDigit = false;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    let isWordChar: boolean;
    let isUpper = false;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) isWordChar = true;
    else if (c >= 65 && c <= 90) isWordChar = isUpper = true;
    else if (c < 128) isWordChar = false;
    else {
      const ch = text[i];
      isWordChar = /[\p{L}\p{N}]/u.test(ch);
      isUpper = isWordChar && ch.toLowerCase() !== ch;
    }
    // A word ends at a non-word character or at a lower→Upper (camelCase) boundary.
    if (start !== -1 && (!isWordChar || (isUpper && prevLowerOrDigit))) {
      pushTerm(out, text.slice(start, i));
      start = -1;
    }
    if (isWordChar && start === -1) start = i;
    prevLowerOrDigit = isWordChar && !isUpper;
  }
  return out;
}

function pushTerm(out: string[], raw: string): void {
  if (raw.length < 2) return;
  const word = raw.toLowerCase();
  if (!STOPWORDS.has(word)) out.push(stem(word));
}

interface Posting {
  ids: number[];
  tfs: number[];
}

/** Min-heap of (score, id) keeping the best `k`; ties prefer the lower id (registration order). */
class TopK {
  readonly scores: number[] = [];
  readonly ids: number[] = [];
  constructor(readonly k: number) {}
  #worse(i: number, j: number): boolean {
    const a = this.scores[i],
      b = this.scores[j];
    return a < b || (a === b && this.ids[i] > this.ids[j]);
  }
  #swap(i: number, j: number): void {
    [this.scores[i], this.scores[j]] = [this.scores[j], this.scores[i]];
    [this.ids[i], this.ids[j]] = [this.ids[j], this.ids[i]];
  }
  push(score: number, id: number): void {
    if (this.scores.length < this.k) {
      this.scores.push(score);
      this.ids.push(id);
      let i = this.scores.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.#worse(i, p)) break;
        this.#swap(i, p);
        i = p;
      }
      return;
    }
    const rootScore = this.scores[0];
    if (score < rootScore || (score === rootScore && id > this.ids[0])) return;
    this.scores[0] = score;
    this.ids[0] = id;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1,
        r = l + 1;
      let m = i;
      if (l < this.scores.length && this.#worse(l, m)) m = l;
      if (r < this.scores.length && this.#worse(r, m)) m = r;
      if (m === i) break;
      this.#swap(i, m);
      i = m;
    }
  }
  sorted(): number[] {
    const idx = this.ids.map((_, i) => i);
    idx.sort((a, b) => this.scores[b] - this.scores[a] || this.ids[a] - this.ids[b]);
    return idx.map((i) => this.ids[i]);
  }
}

export class Bm25Search implements ToolSearchStrategy {
  readonly #opts: Required<Bm25Options>;
  #docs: (Tool | undefined)[] = [];
  #lens: number[] = [];
  #tags: string[][] = [];
  #idOf = new Map<Tool, number>();
  #postings = new Map<string, Posting>();
  #alive = 0;
  #totalLen = 0;
  #scratch = new Float64Array(0);
  readonly #tf = new Map<string, number>();
  readonly #manualCache = new Map<string, string[]>();

  constructor(options: Bm25Options = {}) {
    this.#opts = { nameWeight: 3, descriptionWeight: 1, tagWeight: 3, manualWeight: 0.5, k1: 1.2, b: 0.75, ...options };
  }

  add(tools: readonly Tool[]): void {
    const { nameWeight, descriptionWeight, tagWeight, manualWeight } = this.#opts;
    const tf = this.#tf;
    let len = 0;
    const addTerms = (terms: string[], w: number) => {
      for (let i = 0; i < terms.length; i++) tf.set(terms[i], (tf.get(terms[i]) ?? 0) + w);
      len += terms.length * w;
    };
    for (const tool of tools) {
      const id = this.#docs.length;
      this.#docs.push(tool);
      this.#idOf.set(tool, id);
      len = 0;
      const dot = tool.name.indexOf('.');
      addTerms(tokenize(dot === -1 ? tool.name : tool.name.slice(dot + 1)), nameWeight);
      if (dot !== -1) addTerms(this.#manualTerms(tool.name.slice(0, dot)), manualWeight);
      addTerms(tokenize(tool.description), descriptionWeight);
      const lowerTags: string[] = [];
      for (const tag of tool.tags) {
        addTerms(tokenize(tag), tagWeight);
        lowerTags.push(tag.toLowerCase());
      }
      this.#tags.push(lowerTags);
      this.#lens.push(len);
      this.#totalLen += len;
      this.#alive++;
      for (const [term, f] of tf) {
        let p = this.#postings.get(term);
        if (!p) this.#postings.set(term, (p = { ids: [], tfs: [] }));
        p.ids.push(id);
        p.tfs.push(f);
      }
      tf.clear();
    }
  }

  /** Manual names repeat for every tool of a manual: tokenize each once. */
  #manualTerms(manual: string): string[] {
    let terms = this.#manualCache.get(manual);
    if (!terms) this.#manualCache.set(manual, (terms = tokenize(manual)));
    return terms;
  }

  remove(tools: readonly Tool[]): void {
    for (const tool of tools) {
      const id = this.#idOf.get(tool);
      if (id === undefined) continue;
      this.#idOf.delete(tool);
      this.#docs[id] = undefined;
      this.#totalLen -= this.#lens[id];
      this.#alive--;
    }
    const dead = this.#docs.length - this.#alive;
    if (dead > 1000 && dead > this.#alive) this.#compact();
  }

  #compact(): void {
    const live = this.#docs.filter((d): d is Tool => d !== undefined);
    this.#docs = [];
    this.#lens = [];
    this.#tags = [];
    this.#idOf = new Map();
    this.#postings = new Map();
    this.#alive = 0;
    this.#totalLen = 0;
    this.add(live);
  }

  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[] {
    const required =
      anyOfTagsRequired && anyOfTagsRequired.length > 0
        ? new Set(anyOfTagsRequired.map((t) => t.toLowerCase()))
        : undefined;
    const keep = (id: number) => {
      if (!this.#docs[id]) return false;
      if (!required) return true;
      return this.#tags[id].some((t) => required.has(t));
    };
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0) {
      const out: Tool[] = [];
      for (let id = 0; id < this.#docs.length && (limit === 0 || out.length < limit); id++)
        if (keep(id)) out.push(this.#docs[id]!);
      return out;
    }
    const n = this.#docs.length;
    if (this.#scratch.length < n) this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
    const scores = this.#scratch;
    const touched: number[] = [];
    const { k1, b } = this.#opts;
    const avg = this.#alive > 0 ? this.#totalLen / this.#alive : 1;
    for (const term of terms) {
      const p = this.#postings.get(term);
      if (!p) continue;
      const df = p.ids.length;
      const idf = Math.log(1 + (this.#alive - df + 0.5) / (df + 0.5));
      const { ids, tfs } = p;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        if (this.#docs[id] === undefined) continue;
        const tf = tfs[i];
        const s = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * this.#lens[id]) / avg));
        if (scores[id] === 0) touched.push(id);
        scores[id] += s;
      }
    }
    let result: number[];
    if (limit === 0 || limit >= touched.length) {
      result = touched.filter(keep);
      result.sort((x, y) => scores[y] - scores[x] || x - y);
    } else {
      const heap = new TopK(limit);
      for (const id of touched) if (keep(id)) heap.push(scores[id], id);
      result = heap.sorted();
    }
    for (const id of touched) scores[id] = 0;
    return result.map((id) => this.#docs[id]!);
  }
}
