/**
 * Building one segment of the BM25 index (docs/design/manual-format.md#search-index): the writer that turns the texts
 * of a list of tools into postings, and `SegmentBuild`, which runs it over the tools in steps so that a large
 * registration can index part of its tools while it registers and the rest later
 * (docs/design/manual-format.md#index-in-steps).
 */
import type { Tool } from '../core/types.js';
import type { SegmentData } from './bm25-index-cache.js';
import { DESCRIPTION_REST_WEIGHT, termOf, wordBounds } from './bm25-text.js';

/** The weight of each field of a tool in its document. */
export interface FieldWeights {
  readonly nameWeight: number;
  readonly descriptionWeight: number;
  readonly tagWeight: number;
  readonly manualWeight: number;
}

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
  /** The sum of the stored lengths, added as each document ends. */
  #total = 0;
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

  /** Ends the current document: stores its length. */
  endDoc(): void {
    this.#lens[this.#doc] = this.#len;
    this.#total += this.#lens[this.#doc];
  }

  /** The sum of the lengths stored so far, each as stored (what `lengthSum` of the lengths gives). */
  get total(): number {
    return this.#total;
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

/**
 * About how long all the texts a segment indexes for `docs` are (what SegmentWriter sizes its arrays from), estimated
 * from at most 512 tools spread over the list: summing every tool's texts took 3 ms of a cold 10,000-tool build, as
 * code not yet optimised. A wrong estimate only makes the arrays grow (docs/design/performance.md#cold-index).
 */
function textLength(docs: readonly Tool[]): number {
  const step = Math.max(1, Math.floor(docs.length / 512));
  let chars = 0;
  let sampled = 0;
  for (let d = 0; d < docs.length; d += step) {
    const tool = docs[d];
    chars += tool.name.length + (tool.description?.length ?? 0);
    const tags = tool.tags;
    for (let i = 0; i < tags.length; i++) chars += tags[i].length;
    sampled++;
  }
  return sampled === 0 ? 0 : Math.ceil((chars * docs.length) / sampled);
}

/**
 * Tools indexed per call of `indexTools`. The per-tool loop is in a function called once per chunk, not in `advance`:
 * a build cut by its deadline leaves `advance` at code that had never run, and V8 threw away its optimised loop
 * there ("insufficient type feedback"), so the rest of the build, in the first search, ran unoptimised while V8
 * compiled it again. `indexTools` returns after every chunk, so its optimised code stays valid wherever the build
 * is cut (docs/design/performance.md#cold-index).
 */
const CHUNK = 64;

/** Indexes `docs[from .. to)` with `w`, each tool as one document of the segment. */
function indexTools(w: SegmentWriter, docs: readonly Tool[], from: number, to: number, weights: FieldWeights): void {
  const { nameWeight, descriptionWeight, tagWeight, manualWeight } = weights;
  for (let d = from; d < to; d++) {
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
    w.endDoc();
  }
}

/**
 * The build of one segment over `docs`, in steps: `advance` indexes tools in order until all are indexed or a deadline
 * passes, and `finish` lays out the postings once every tool is indexed. The segment is the same however the build
 * was split: the writer carries its state from one step to the next.
 */
export class SegmentBuild {
  readonly docs: readonly Tool[];
  readonly #writer: SegmentWriter;
  readonly #weights: FieldWeights;
  #next = 0;

  constructor(docs: readonly Tool[], weights: FieldWeights) {
    this.docs = docs;
    this.#weights = weights;
    this.#writer = new SegmentWriter(docs.length, textLength(docs));
  }

  /** True when every tool is indexed. */
  get done(): boolean {
    return this.#next === this.docs.length;
  }

  /**
   * Indexes the next tools until all are indexed or `performance.now()` reaches `deadline` (looked at every
   * `CHUNK` tools, so a step may run a little past it); `Infinity` indexes all. Returns `done`.
   */
  advance(deadline: number): boolean {
    const docs = this.docs;
    let d = this.#next;
    while (d < docs.length) {
      if (deadline !== Infinity && performance.now() >= deadline) break;
      const end = Math.min(docs.length, d + CHUNK);
      indexTools(this.#writer, docs, d, end, this.#weights);
      d = end;
    }
    this.#next = d;
    return d === docs.length;
  }

  /** The sum of the indexed tools' lengths, as `lengthSum` adds them: summed as they are indexed. */
  get totalLength(): number {
    return this.#writer.total;
  }

  /** The segment's data, once `done`: the postings laid out per term. */
  finish(): SegmentData {
    if (!this.done) throw new Error('Internal error: a search-index segment was finished before all its tools');
    return this.#writer.finish();
  }
}

/**
 * The sum of a segment's document lengths, added in order from 0: how a built segment's total is made as it is built,
 * so that a segment read from the index cache adds exactly the same total.
 */
export function lengthSum(lens: Float32Array): number {
  let total = 0;
  for (let d = 0; d < lens.length; d++) total += lens[d];
  return total;
}
