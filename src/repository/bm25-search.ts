/**
 * The default search: ranked full-text search (BM25F) over tool name, description and tags,
 * with an inverted index maintained incrementally as manuals come and go.
 */
import type { ToolSearchStrategy } from '../core/repository.js';
import type { Tool } from '../core/types.js';
import { cacheKey, readCachedSegment, type SegmentData, writeCachedSegment } from './bm25-index-cache.js';
import { lengthSum, SegmentBuild } from './bm25-segment.js';
import { DESCRIPTION_REST_WEIGHT, tokenize } from './bm25-text.js';

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
  /**
   * How long, in milliseconds, a large registration (1,024 tools or more) indexes its tools before it returns. The
   * tools it has not reached are indexed in short steps while the process is idle, and the next search (or change of
   * the index) finishes whatever is left first, so every search sees every registered tool
   * (docs/design/manual-format.md#index-in-steps). `Infinity` indexes every tool during registration. @default 25
   */
  indexBudgetMs?: number;
}

/** The default `indexBudgetMs`: docs/design/performance.md#cold-registration says how it was chosen. */
const DEFAULT_INDEX_BUDGET_MS = 25;
/** How long one idle step of an unfinished build may run before it lets the event loop go on. */
const IDLE_STEP_MS = 4;

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

export class Bm25Search implements ToolSearchStrategy {
  readonly #opts: Required<
    Omit<Bm25Options, 'indexCacheDir' | 'onIndexCacheError' | 'indexOnFirstSearch' | 'indexBudgetMs'>
  >;
  readonly #cacheDir: string | undefined;
  readonly #onCacheError: ((error: Error) => void) | undefined;
  readonly #deferred: boolean;
  readonly #budgetMs: number;
  /**
   * Registrations not indexed yet, in order: small ones (merged into one segment on the next search or large
   * registration), or every one with `indexOnFirstSearch`.
   */
  #pending: (readonly Tool[])[] = [];
  #segments: Segment[] = [];
  /**
   * The segment of the last large registration while its build is unfinished (its budget ran out). It is not in
   * `#segments` and counts in no total until it is finished, by idle steps or by the next call that reads or changes
   * the index.
   */
  #building: SegmentBuild | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #alive = 0;
  #totalLen = 0;
  #scratch = new Float64Array(0);

  constructor(options: Bm25Options = {}) {
    const { indexCacheDir, onIndexCacheError, indexOnFirstSearch, indexBudgetMs, ...weights } = options;
    if (indexBudgetMs !== undefined && !(typeof indexBudgetMs === 'number' && indexBudgetMs >= 0))
      throw new RangeError(
        `Bm25Options.indexBudgetMs must be a number of milliseconds ≥ 0, got ${String(indexBudgetMs)}`,
      );
    this.#budgetMs = indexBudgetMs ?? DEFAULT_INDEX_BUDGET_MS;
    this.#opts = { nameWeight: 3, descriptionWeight: 1, tagWeight: 3, manualWeight: 0.5, k1: 1.2, b: 0.75, ...weights };
    this.#cacheDir = indexCacheDir;
    this.#onCacheError = onIndexCacheError;
    this.#deferred = indexOnFirstSearch === true;
  }

  /**
   * Indexes a large registration as it registers, for up to `indexBudgetMs` (the rest in idle steps or on the next
   * search), so the first search after it does not pay for all of it; small ones are queued and merged into one
   * segment later (docs/design/manual-format.md#search-index). With `indexOnFirstSearch` every registration is queued.
   */
  add(tools: readonly Tool[]): void {
    if (tools.length === 0) return;
    this.#pending.push(tools);
    if (tools.length >= SMALL_BATCH && !this.#deferred) this.#indexPending(performance.now() + this.#budgetMs);
  }

  /** Stops the idle steps of an unfinished build (the next search still finishes it). */
  close(): void {
    this.#stopIdleSteps();
  }

  #stopIdleSteps(): void {
    if (this.#idle !== undefined) clearTimeout(this.#idle);
    this.#idle = undefined;
  }

  /**
   * Indexes the queued registrations in registration order (which breaks ties): runs of small ones merged into one
   * segment, each large one a segment of its own (read from or written to the index cache when there is one). An
   * unfinished build is finished first. With a `deadline` (`performance.now()` time), the last registration, when it
   * is large and not cached, is indexed until then and left to `#building` if unfinished.
   */
  #indexPending(deadline = Infinity): void {
    this.#finishBuilding();
    const pending = this.#pending;
    let small: Tool[] = [];
    for (let i = 0; i < pending.length; i++) {
      const tools = pending[i];
      if (tools.length < SMALL_BATCH) {
        small.push(...tools);
        continue;
      }
      if (small.length > 0) this.#segments.push(this.#build(small));
      small = [];
      if (this.#cacheDir !== undefined) this.#segments.push(this.#buildCached(tools, this.#cacheDir));
      else if (i === pending.length - 1 && deadline !== Infinity) this.#startBuilding(tools, deadline);
      else this.#segments.push(this.#build(tools));
    }
    if (small.length > 0) this.#segments.push(this.#build(small));
    this.#pending = [];
  }

  /** Indexes `tools` until `deadline`; what is left is indexed in idle steps (or by the next call that needs it). */
  #startBuilding(tools: readonly Tool[], deadline: number): void {
    const build = new SegmentBuild(tools, this.#opts);
    if (build.advance(deadline)) {
      this.#segments.push(this.#adopt(tools, build.finish(), build.totalLength));
      return;
    }
    this.#building = build;
    this.#scheduleIdleStep();
  }

  /**
   * The next idle step: a timer of 0 ms, unref'd, so an unfinished build never keeps the process alive. Not an
   * unref'd `setImmediate`: while only unref'd immediates wait, the event loop blocks in its poll for I/O and runs
   * them once per turn, so a process waiting 100 ms for a reply ran one step in that time; a due timer, ref'd or not,
   * bounds the poll, so the steps follow each other about a millisecond apart (docs/design/manual-format.md#index-in-steps).
   */
  #scheduleIdleStep(): void {
    this.#idle = setTimeout(() => {
      this.#idle = undefined;
      const build = this.#building;
      if (build === undefined) return;
      try {
        if (build.advance(performance.now() + IDLE_STEP_MS)) this.#finishBuilding();
        else this.#scheduleIdleStep();
      } catch {
        // A tool the writer cannot read (saved through the repository API without its fields): the steps stop, and
        // the next call that needs the index meets the same error itself, as it would have when the build ran there.
      }
    }, 0);
    this.#idle.unref();
  }

  /**
   * Finishes the unfinished build, if any, and adds its segment after every other. A build that throws stays
   * unfinished, so every later call meets its error instead of searching without its tools.
   */
  #finishBuilding(): void {
    const build = this.#building;
    if (build === undefined) return;
    this.#stopIdleSteps();
    if (!build.done) build.advance(Infinity);
    this.#building = undefined;
    this.#segments.push(this.#adopt(build.docs, build.finish(), build.totalLength));
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

  /**
   * A segment of `docs` from its data, counted in the totals. `total` is the sum of its lengths as `lengthSum` makes it
   * (a build sums them as it goes; a segment read from the cache is summed here), so both rank exactly alike.
   */
  #adopt(docs: readonly Tool[], data: SegmentData, total = lengthSum(data.lens)): Segment {
    this.#totalLen += total;
    this.#alive += docs.length;
    return { ...data, docs, alive: new Uint8Array(docs.length).fill(1), dead: 0 };
  }

  remove(tools: readonly Tool[]): void {
    if (tools.length === 0) return;
    this.#finishBuilding();
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
    this.#finishBuilding();
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
    const build = new SegmentBuild(docs, this.#opts);
    build.advance(Infinity);
    return this.#adopt(docs, build.finish(), build.totalLength);
  }

  search(query: string, limit: number, anyOfTagsRequired?: readonly string[] | null): Tool[] {
    if (
      this.#pending.length > 0 ||
      this.#building !== undefined ||
      this.#segments.some((s) => s.dead * 2 > s.docs.length)
    )
      this.#flush();
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
    // A typed array, not `terms.map`: the array `map` made held small integers when no term matched and doubles
    // otherwise, two shapes, and V8's optimised search was thrown away ("wrong map") each time the shape changed
    // (docs/design/performance.md#search-warm-up).
    const idfs = new Float64Array(terms.length);
    for (let q = 0; q < terms.length; q++) {
      let df = 0;
      for (const seg of segments) {
        const t = seg.terms.get(terms[q]);
        if (t !== undefined) df += seg.offsets[t + 1] - seg.offsets[t];
      }
      idfs[q] = df === 0 ? 0 : Math.log(1 + (this.#alive - df + 0.5) / (df + 0.5));
    }
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
