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

/** The weight of a description's later paragraphs, relative to its first. */
export const DESCRIPTION_REST_WEIGHT = 0.1;

/**
 * A description's first paragraph (its summary) and the rest. Search weighs the rest far less: an OpenAPI tool's
 * description is its summary followed by the operation's long text (docs/design/openapi.md#naming), and that text,
 * counted in full, buried "List commits" under every tool that mentions commits (docs/design/manual-format.md#search).
 */
export function splitDescription(description: string): [head: string, rest: string] {
  const cut = description.indexOf('\n\n');
  return cut === -1 ? [description, ''] : [description.slice(0, cut), description.slice(cut + 2)];
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

/**
 * One immutable block of the index (docs/design/manual-format.md#search-index): the tools of one registration (small
 * ones merged) with postings in compressed-sparse-row form: for term `t`, documents
 * `ids[offsets[t] .. offsets[t + 1])` with weighted frequencies in `tfs`. Typed arrays keep it to a few bytes per
 * posting instead of two boxed numbers in growable arrays.
 */
interface Segment {
  readonly docs: readonly Tool[];
  /** 1 while the tool is registered; removal clears it (the postings stay until the segment is rebuilt). */
  readonly alive: Uint8Array;
  readonly lens: Float32Array;
  readonly terms: Map<string, number>;
  readonly offsets: Uint32Array;
  readonly ids: Uint16Array | Uint32Array;
  readonly tfs: Float32Array;
  dead: number;
}

/** Registrations smaller than this are merged into one segment when the index is built. */
const SMALL_BATCH = 1024;

export class Bm25Search implements ToolSearchStrategy {
  readonly #opts: Required<Bm25Options>;
  /** Registered tools not indexed yet: the index is built on the first search after a change. */
  #pending: (readonly Tool[])[] = [];
  #segments: Segment[] = [];
  #alive = 0;
  #totalLen = 0;
  #scratch = new Float64Array(0);
  readonly #tf = new Map<string, number>();
  readonly #manualCache = new Map<string, string[]>();

  constructor(options: Bm25Options = {}) {
    this.#opts = { nameWeight: 3, descriptionWeight: 1, tagWeight: 3, manualWeight: 0.5, k1: 1.2, b: 0.75, ...options };
  }

  /** Queues the tools for indexing (the work happens on the next search, so registration stays cheap). */
  add(tools: readonly Tool[]): void {
    if (tools.length > 0) this.#pending.push(tools);
  }

  remove(tools: readonly Tool[]): void {
    if (tools.length === 0) return;
    const gone = new Set(tools);
    this.#pending = this.#pending
      .map((batch) => (batch.some((t) => gone.has(t)) ? batch.filter((t) => !gone.has(t)) : batch))
      .filter((batch) => batch.length > 0);
    for (const seg of this.#segments) {
      for (let i = 0; i < seg.docs.length; i++) {
        if (seg.alive[i] === 0 || !gone.has(seg.docs[i])) continue;
        seg.alive[i] = 0;
        seg.dead++;
        this.#alive--;
        this.#totalLen -= seg.lens[i];
      }
    }
  }

  /** Indexes pending registrations and rebuilds segments that are mostly removed tools, keeping registration order. */
  #flush(): void {
    const rebuilt: Segment[] = [];
    for (const seg of this.#segments) {
      if (seg.dead === 0 || seg.dead * 2 <= seg.docs.length) {
        rebuilt.push(seg);
        continue;
      }
      const live = seg.docs.filter((_, i) => seg.alive[i] === 1);
      this.#alive -= live.length;
      for (let i = 0; i < seg.docs.length; i++) if (seg.alive[i] === 1) this.#totalLen -= seg.lens[i];
      if (live.length > 0) rebuilt.push(this.#build(live));
    }
    let small: Tool[] = [];
    for (const batch of this.#pending) {
      if (batch.length >= SMALL_BATCH) {
        if (small.length > 0) rebuilt.push(this.#build(small));
        small = [];
        rebuilt.push(this.#build(batch));
      } else small.push(...batch);
    }
    if (small.length > 0) rebuilt.push(this.#build(small));
    this.#pending = [];
    this.#segments = rebuilt;
  }

  #build(docs: readonly Tool[]): Segment {
    const { nameWeight, descriptionWeight, tagWeight, manualWeight } = this.#opts;
    const tf = this.#tf;
    const terms = new Map<string, number>();
    // Postings as (term, doc, tf) triples first; then counted and laid out per term.
    const pTerm: number[] = [];
    const pDoc: number[] = [];
    const pTf: number[] = [];
    const lens = new Float32Array(docs.length);
    let len = 0;
    const addTerms = (list: string[], w: number, counts = true) => {
      for (let i = 0; i < list.length; i++) tf.set(list[i], (tf.get(list[i]) ?? 0) + w);
      if (counts) len += list.length * w;
    };
    for (let d = 0; d < docs.length; d++) {
      const tool = docs[d];
      len = 0;
      const dot = tool.name.indexOf('.');
      addTerms(tokenize(dot === -1 ? tool.name : tool.name.slice(dot + 1)), nameWeight);
      if (dot !== -1) addTerms(this.#manualTerms(tool.name.slice(0, dot)), manualWeight);
      const [head, rest] = splitDescription(tool.description ?? '');
      addTerms(tokenize(head), descriptionWeight);
      // Later paragraphs can match but do not lengthen the document: a long text would otherwise sink the tool.
      if (rest) addTerms(tokenize(rest), descriptionWeight * DESCRIPTION_REST_WEIGHT, false);
      for (const tag of tool.tags) addTerms(tokenize(tag), tagWeight);
      lens[d] = len;
      this.#totalLen += len;
      for (const [term, f] of tf) {
        let t = terms.get(term);
        if (t === undefined) terms.set(term, (t = terms.size));
        pTerm.push(t);
        pDoc.push(d);
        pTf.push(f);
      }
      tf.clear();
    }
    this.#alive += docs.length;
    const offsets = new Uint32Array(terms.size + 1);
    for (const t of pTerm) offsets[t + 1]++;
    for (let t = 0; t < terms.size; t++) offsets[t + 1] += offsets[t];
    const cursor = offsets.slice(0, terms.size);
    const ids = docs.length <= 0xffff ? new Uint16Array(pTerm.length) : new Uint32Array(pTerm.length);
    const tfs = new Float32Array(pTerm.length);
    for (let i = 0; i < pTerm.length; i++) {
      const at = cursor[pTerm[i]]++;
      ids[at] = pDoc[i];
      tfs[at] = pTf[i];
    }
    return { docs, alive: new Uint8Array(docs.length).fill(1), lens, terms, offsets, ids, tfs, dead: 0 };
  }

  /** Manual names repeat for every tool of a manual: tokenize each once. */
  #manualTerms(manual: string): string[] {
    let terms = this.#manualCache.get(manual);
    if (!terms) this.#manualCache.set(manual, (terms = tokenize(manual)));
    return terms;
  }

  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[] {
    if (this.#pending.length > 0 || this.#segments.some((s) => s.dead * 2 > s.docs.length)) this.#flush();
    const required =
      anyOfTagsRequired && anyOfTagsRequired.length > 0
        ? new Set(anyOfTagsRequired.map((t) => t.toLowerCase()))
        : undefined;
    const tagsMatch = (tool: Tool) => !required || tool.tags.some((t) => required.has(t.toLowerCase()));
    const terms = [...new Set(tokenize(query))];
    const segments = this.#segments;
    if (terms.length === 0) {
      const out: Tool[] = [];
      for (const seg of segments) {
        for (let i = 0; i < seg.docs.length && (limit === 0 || out.length < limit); i++)
          if (seg.alive[i] === 1 && tagsMatch(seg.docs[i])) out.push(seg.docs[i]);
      }
      return out;
    }
    // Document frequency over every segment (removed tools count until their segment is rebuilt, as before).
    const { k1, b } = this.#opts;
    const avg = this.#alive > 0 ? this.#totalLen / this.#alive : 1;
    const idfs = terms.map((term) => {
      let df = 0;
      for (const seg of segments) {
        const t = seg.terms.get(term);
        if (t !== undefined) df += seg.offsets[t + 1] - seg.offsets[t];
      }
      return df === 0 ? 0 : Math.log(1 + (this.#alive - df + 0.5) / (df + 0.5));
    });
    // Global ids follow registration order (segment after segment), which breaks ties.
    const heap = limit === 0 ? undefined : new TopK(limit);
    const all: Array<[number, number, Tool]> = [];
    let base = 0;
    for (const seg of segments) {
      const n = seg.docs.length;
      if (this.#scratch.length < n) this.#scratch = new Float64Array(Math.max(n, this.#scratch.length * 2));
      const scores = this.#scratch;
      const touched: number[] = [];
      for (let q = 0; q < terms.length; q++) {
        const t = seg.terms.get(terms[q]);
        if (t === undefined || idfs[q] === 0) continue;
        const idf = idfs[q];
        for (let i = seg.offsets[t]; i < seg.offsets[t + 1]; i++) {
          const id = seg.ids[i];
          if (seg.alive[id] === 0) continue;
          const f = seg.tfs[i];
          const s = (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * seg.lens[id]) / avg));
          if (scores[id] === 0) touched.push(id);
          scores[id] += s;
        }
      }
      for (const id of touched) {
        if (tagsMatch(seg.docs[id])) {
          if (heap) heap.push(scores[id], base + id);
          else all.push([scores[id], base + id, seg.docs[id]]);
        }
        scores[id] = 0;
      }
      base += n;
    }
    if (!heap) {
      all.sort((x, y) => y[0] - x[0] || x[1] - y[1]);
      return all.map((e) => e[2]);
    }
    return heap.sorted().map((id) => this.#docAt(id));
  }

  #docAt(globalId: number): Tool {
    let id = globalId;
    for (const seg of this.#segments) {
      if (id < seg.docs.length) return seg.docs[id];
      id -= seg.docs.length;
    }
    throw new RangeError(`no document ${globalId}`);
  }
}
