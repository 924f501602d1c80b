/**
 * The default search: ranked full-text search (BM25F) over tool name, description and tags,
 * with an inverted index maintained incrementally as manuals come and go.
 */
import type { ToolSearchStrategy } from '../core/repository.js';
import type { Tool } from '../core/types.js';
import { cacheKey, readCachedSegment, type SegmentData, writeCachedSegment } from './bm25-index-cache.js';
import { DESCRIPTION_REST_WEIGHT, termOf, tokenize, wordBounds } from './bm25-text.js';

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
  /**
   * A folder where the index of each large registration (1,024 tools or more) is kept on disk, so that a fresh process
   * registering the same tools reads it instead of building it (docs/design/manual-format.md#index-cache). Off by
   * default.
   */
  indexCacheDir?: string;
  /** Told when the index cache cannot be written (the index is then built as usual). */
  onIndexCacheError?: (error: Error) => void;
  /**
   * Index every registration on the first search after it, not when it registers: for a process that registers
   * manuals to call tools by name and may never search (a `utcp call` on the command line), which then never pays
   * for the index (docs/design/manual-format.md#search-index). The first search pays instead. @default false
   */
  indexOnFirstSearch?: boolean;
}

/**
 * Min-heap of (score, id) keeping the best `k`; ties prefer the lower id (registration order). Plain loops only, no
 * callbacks into array built-ins: `sorted()` used `map` and `sort` with closures, which V8's optimised search code
 * deoptimised on in a loop (a "wrong map" bailout on most calls of the first few hundred searches).
 */
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
    const score = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = score;
    const id = this.ids[i];
    this.ids[i] = this.ids[j];
    this.ids[j] = id;
  }
  /** Restores the heap below `i` within the first `size` entries. */
  #siftDown(i: number, size: number): void {
    for (;;) {
      const l = 2 * i + 1,
        r = l + 1;
      let m = i;
      if (l < size && this.#worse(l, m)) m = l;
      if (r < size && this.#worse(r, m)) m = r;
      if (m === i) return;
      this.#swap(i, m);
      i = m;
    }
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
    this.#siftDown(0, this.scores.length);
  }
  /** The kept ids, best first (higher score, then lower id). Heap sort in place: the heap is used up. */
  sorted(): number[] {
    const out: number[] = [];
    for (let size = this.ids.length; size > 0; size--) {
      // The root is the worst entry left: it goes after every entry still in the heap.
      out.push(this.ids[0]);
      this.#swap(0, size - 1);
      this.#siftDown(0, size - 1);
    }
    out.reverse();
    return out;
  }
}

/**
 * One immutable block of the index (docs/design/manual-format.md#search-index): the tools of one registration (small
 * ones merged) with postings in compressed-sparse-row form: for term `t`, documents
 * `ids[offsets[t] .. offsets[t + 1])` with weighted frequencies in `tfs`. Typed arrays keep it to a few bytes per
 * posting instead of two boxed numbers in growable arrays.
 */
interface Segment extends SegmentData {
  readonly docs: readonly Tool[];
  /** 1 while the tool is registered; removal clears it (the postings stay until the segment is rebuilt). */
  readonly alive: Uint8Array;
  dead: number;
}

/** Registrations smaller than this are merged into one segment when the index is built. */
const SMALL_BATCH = 1024;

/**
 * Builds one segment in a single pass (docs/design/manual-format.md#search-index): each distinct raw word is lowered,
 * stop-word checked and stemmed once per segment, and a tool's repeated terms add to its posting in place, so indexing
 * allocates little besides the word slices and the postings themselves.
 */
class SegmentWriter {
  readonly #terms = new Map<string, number>();
  /** Raw word → term id, or -1 for a word that is not indexed. */
  readonly #words = new Map<string, number>();
  /** Per term: the last document that used it and where that posting is. */
  #lastDoc: Int32Array;
  #slot: Int32Array;
  /** Per term: how many documents use it (its postings). */
  #df: Int32Array;
  /** Postings in the order they were made: term, document, weighted frequency. */
  #pTerm: Int32Array;
  #pDoc: Int32Array;
  #pTf: Float64Array;
  #n = 0;
  #doc = 0;
  #len = 0;
  readonly #lens: Float32Array;
  /** Where `wordBounds` writes the words of each text (reused, grown for a longer text). */
  #bounds = new Int32Array(256);
  /**
   * `chars` is the length of all the texts the segment will index. The arrays are sized from it up front so that they
   * almost never grow while V8 is still optimising the writer: a resize assigns a field the optimising compiler took as
   * constant, which threw away the compile in progress and kept a cold build in unoptimised code twice as long
   * (docs/design/performance.md#cold-index). Both corpora of the benchmark make one posting per 15–17 characters and
   * 8–31 postings per tool. The first size is capped at 64 postings per tool: a tool's repeated words share one
   * posting, so long repetitive descriptions would otherwise reserve far more than they use.
   */
  constructor(docs: number, chars: number) {
    this.#lens = new Float32Array(docs);
    const postings = Math.max(4096, Math.min(Math.ceil(chars / 8), docs * 64));
    const terms = Math.min(postings, docs * 2 + 1024);
    this.#lastDoc = new Int32Array(terms).fill(-1);
    this.#slot = new Int32Array(terms);
    this.#df = new Int32Array(terms);
    this.#pTerm = new Int32Array(postings);
    this.#pDoc = new Int32Array(postings);
    this.#pTf = new Float64Array(postings);
  }

  startDoc(d: number): void {
    this.#doc = d;
    this.#len = 0;
  }

  /** Ends the current document; returns its length as stored (what removal subtracts again). */
  endDoc(): number {
    this.#lens[this.#doc] = this.#len;
    return this.#lens[this.#doc];
  }

  /**
   * Indexes the words of `text` for the current document. The per-word work is this one loop, over the word bounds
   * `wordBounds` wrote, with the tables in local variables: a callback per word (the scanner calling the writer) kept
   * a cold build in calls between functions not yet optimised, and its closure, new with each writer, made V8 throw
   * away the optimised scanner at the next writer (docs/design/performance.md#cold-index).
   */
  addText(text: string, weight: number, counts: boolean): void {
    if (!text) return;
    if (text.length * 2 > this.#bounds.length) this.#bounds = new Int32Array(text.length * 2);
    const bounds = this.#bounds;
    const count = wordBounds(text, bounds);
    const words = this.#words;
    const doc = this.#doc;
    let lastDoc = this.#lastDoc;
    let slot = this.#slot;
    let df = this.#df;
    let pTerm = this.#pTerm;
    let pDoc = this.#pDoc;
    let pTf = this.#pTf;
    let n = this.#n;
    let len = this.#len;
    for (let k = 0; k < count; k += 2) {
      const raw = text.slice(bounds[k], bounds[k + 1]);
      let t = words.get(raw);
      if (t === undefined) {
        t = this.#newWord(raw);
        lastDoc = this.#lastDoc;
        slot = this.#slot;
        df = this.#df;
      }
      if (t < 0) continue;
      if (counts) len += weight;
      if (lastDoc[t] === doc) {
        pTf[slot[t]] += weight;
        continue;
      }
      if (n >= pTerm.length) {
        this.#grow();
        pTerm = this.#pTerm;
        pDoc = this.#pDoc;
        pTf = this.#pTf;
      }
      lastDoc[t] = doc;
      slot[t] = n;
      df[t]++;
      pTerm[n] = t;
      pDoc[n] = doc;
      pTf[n] = weight;
      n++;
    }
    this.#n = n;
    this.#len = len;
  }

  /** Looks up a raw word seen for the first time in this segment: its term id, or -1 for a word not indexed. */
  #newWord(raw: string): number {
    let t: number | undefined;
    const term = termOf(raw);
    if (term === undefined) t = -1;
    else {
      t = this.#terms.get(term);
      if (t === undefined) {
        t = this.#terms.size;
        this.#terms.set(term, t);
        if (t >= this.#lastDoc.length) {
          const lastDoc = new Int32Array(t * 2).fill(-1);
          lastDoc.set(this.#lastDoc);
          this.#lastDoc = lastDoc;
          const slot = new Int32Array(t * 2);
          slot.set(this.#slot);
          this.#slot = slot;
          const df = new Int32Array(t * 2);
          df.set(this.#df);
          this.#df = df;
        }
      }
    }
    this.#words.set(raw, t);
    return t;
  }

  #grow(): void {
    const size = this.#pTerm.length * 2;
    const pTerm = new Int32Array(size);
    pTerm.set(this.#pTerm);
    this.#pTerm = pTerm;
    const pDoc = new Int32Array(size);
    pDoc.set(this.#pDoc);
    this.#pDoc = pDoc;
    const pTf = new Float64Array(size);
    pTf.set(this.#pTf);
    this.#pTf = pTf;
  }

  /** Lays the postings out per term (compressed sparse rows), in document order within each term. */
  finish(): SegmentData {
    const terms = this.#terms;
    const termCount = terms.size;
    const count = this.#n;
    // Each term's postings start where the previous term's end (its document frequency, counted as they were made).
    const offsets = new Uint32Array(termCount + 1);
    const df = this.#df;
    for (let t = 0; t < termCount; t++) offsets[t + 1] = offsets[t] + df[t];
    const ids = this.#lens.length <= 0xffff ? new Uint16Array(count) : new Uint32Array(count);
    const tfs = new Float32Array(count);
    layOut(this.#pTerm, this.#pDoc, this.#pTf, count, offsets.slice(0, termCount), ids, tfs);
    return { lens: this.#lens, terms, offsets, ids, tfs };
  }
}

/**
 * Moves `count` postings, in the order they were made, to their term's rows (`cursor`: where each term's next posting
 * goes). A function of its own with one loop: V8 compiles it on-stack while it runs, with no other loop in it that
 * has not run yet (which would throw that compile away).
 */
function layOut(
  pTerm: Int32Array,
  pDoc: Int32Array,
  pTf: Float64Array,
  count: number,
  cursor: Uint32Array,
  ids: Uint16Array | Uint32Array,
  tfs: Float32Array,
): void {
  for (let i = 0; i < count; i++) {
    const at = cursor[pTerm[i]]++;
    ids[at] = pDoc[i];
    tfs[at] = pTf[i];
  }
}

/** The length of every text `#build` indexes for `docs` (what SegmentWriter sizes its arrays from). */
function textLength(docs: readonly Tool[]): number {
  let chars = 0;
  for (let d = 0; d < docs.length; d++) {
    const tool = docs[d];
    chars += tool.name.length + (tool.description?.length ?? 0);
    const tags = tool.tags;
    for (let i = 0; i < tags.length; i++) chars += tags[i].length;
  }
  return chars;
}

export class Bm25Search implements ToolSearchStrategy {
  readonly #opts: Required<Omit<Bm25Options, 'indexCacheDir' | 'onIndexCacheError' | 'indexOnFirstSearch'>>;
  readonly #cacheDir: string | undefined;
  readonly #onCacheError: ((error: Error) => void) | undefined;
  readonly #deferred: boolean;
  /**
   * Registrations not indexed yet, in order: small ones (merged into one segment on the next search or large
   * registration), or every one with `indexOnFirstSearch`.
   */
  #pending: (readonly Tool[])[] = [];
  #segments: Segment[] = [];
  #alive = 0;
  #totalLen = 0;
  #scratch = new Float64Array(0);

  constructor(options: Bm25Options = {}) {
    const { indexCacheDir, onIndexCacheError, indexOnFirstSearch, ...weights } = options;
    this.#opts = { nameWeight: 3, descriptionWeight: 1, tagWeight: 3, manualWeight: 0.5, k1: 1.2, b: 0.75, ...weights };
    this.#cacheDir = indexCacheDir;
    this.#onCacheError = onIndexCacheError;
    this.#deferred = indexOnFirstSearch === true;
  }

  /**
   * Indexes a large registration at once, so the first search after it does not pay for it; small ones are queued and
   * merged into one segment later (docs/design/manual-format.md#search-index). With `indexOnFirstSearch` every
   * registration is queued.
   */
  add(tools: readonly Tool[]): void {
    if (tools.length === 0) return;
    this.#pending.push(tools);
    if (tools.length >= SMALL_BATCH && !this.#deferred) this.#indexPending();
  }

  /**
   * Indexes the queued registrations in registration order (which breaks ties): runs of small ones merged into one
   * segment, each large one a segment of its own (read from or written to the index cache when there is one).
   */
  #indexPending(): void {
    let small: Tool[] = [];
    for (const tools of this.#pending) {
      if (tools.length < SMALL_BATCH) {
        small.push(...tools);
        continue;
      }
      if (small.length > 0) this.#segments.push(this.#build(small));
      small = [];
      this.#segments.push(this.#cacheDir === undefined ? this.#build(tools) : this.#buildCached(tools, this.#cacheDir));
    }
    if (small.length > 0) this.#segments.push(this.#build(small));
    this.#pending = [];
  }

  /** A large registration's segment from the index cache, or built and then written to it. */
  #buildCached(tools: readonly Tool[], dir: string): Segment {
    const { nameWeight, descriptionWeight, tagWeight, manualWeight } = this.#opts;
    const key = cacheKey(tools, [nameWeight, descriptionWeight, tagWeight, manualWeight, DESCRIPTION_REST_WEIGHT]);
    const cached = readCachedSegment(dir, key, tools.length);
    if (cached !== undefined) return this.#adopt(tools, cached);
    const segment = this.#build(tools);
    const error = writeCachedSegment(dir, key, segment);
    if (error) this.#onCacheError?.(error);
    return segment;
  }

  #adopt(docs: readonly Tool[], data: SegmentData): Segment {
    // Summed as #build sums them, so a cached segment ranks exactly as a built one.
    for (let d = 0; d < docs.length; d++) this.#totalLen += data.lens[d];
    this.#alive += docs.length;
    return { ...data, docs, alive: new Uint8Array(docs.length).fill(1), dead: 0 };
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

  /** Indexes pending small registrations and rebuilds segments that are mostly removed tools, keeping registration order. */
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
    this.#segments = rebuilt;
    this.#indexPending();
  }

  #build(docs: readonly Tool[]): Segment {
    const { nameWeight, descriptionWeight, tagWeight, manualWeight } = this.#opts;
    const w = new SegmentWriter(docs.length, textLength(docs));
    for (let d = 0; d < docs.length; d++) {
      const tool = docs[d];
      w.startDoc(d);
      const dot = tool.name.indexOf('.');
      w.addText(dot === -1 ? tool.name : tool.name.slice(dot + 1), nameWeight, true);
      if (dot !== -1) w.addText(tool.name.slice(0, dot), manualWeight, true);
      // As splitDescription, without an array per tool (destructured through the iterator protocol while cold).
      const description = tool.description ?? '';
      const cut = description.indexOf('\n\n');
      if (cut === -1) w.addText(description, descriptionWeight, true);
      else {
        w.addText(description.slice(0, cut), descriptionWeight, true);
        // Later paragraphs can match but do not lengthen the document: a long text would otherwise sink the tool.
        const rest = description.slice(cut + 2);
        if (rest) w.addText(rest, descriptionWeight * DESCRIPTION_REST_WEIGHT, false);
      }
      const tags = tool.tags;
      for (let i = 0; i < tags.length; i++) w.addText(tags[i], tagWeight, true);
      this.#totalLen += w.endDoc();
    }
    this.#alive += docs.length;
    return { ...w.finish(), docs, alive: new Uint8Array(docs.length).fill(1), dead: 0 };
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
    const best = heap.sorted();
    const out: Tool[] = [];
    for (let i = 0; i < best.length; i++) out.push(this.#docAt(best[i]));
    return out;
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
