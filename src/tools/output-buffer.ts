/**
 * The output `bash` keeps of one process (docs/design/code-tools.md#processes): stdout and stderr together, read
 * with a cursor, the head kept for the inline summary.
 */
/**
 * Output kept for one process: the first `headBytes` bytes, and the last `capacity` bytes (a ring held as a list of
 * chunks, so memory follows the output actually written).
 */
export class OutputBuffer {
  readonly #capacity: number;
  readonly #headBytes: number;
  #chunks: Buffer[] = [];
  #held = 0;
  #total = 0; // bytes written so far; the chunks hold [total - held, total)
  #head: Buffer[] = [];
  #headLength = 0;

  constructor(capacity: number, headBytes: number) {
    this.#capacity = Math.max(1, capacity);
    this.#headBytes = headBytes;
  }

  get total(): number {
    return this.#total;
  }

  get #start(): number {
    return this.#total - this.#held;
  }

  write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.#headLength < this.#headBytes) {
      const part = chunk.subarray(0, this.#headBytes - this.#headLength);
      this.#head.push(Buffer.from(part));
      this.#headLength += part.length;
    }
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    this.#total += chunk.length;
    while (this.#held - this.#chunks[0].length >= this.#capacity) this.#held -= this.#chunks.shift()!.length;
    const excess = this.#held - this.#capacity;
    if (excess > 0) {
      this.#chunks[0] = Buffer.from(this.#chunks[0].subarray(excess));
      this.#held -= excess;
    }
  }

  /** Copies absolute range [from, to) out of the held chunks (it must be held). */
  #copy(from: number, to: number): Buffer {
    const out = Buffer.allocUnsafe(Math.max(0, to - from));
    let at = this.#start;
    let written = 0;
    for (const c of this.#chunks) {
      const cStart = at;
      const cEnd = at + c.length;
      at = cEnd;
      if (cEnd <= from) continue;
      if (cStart >= to) break;
      const a = Math.max(from, cStart) - cStart;
      const b = Math.min(to, cEnd) - cStart;
      c.copy(out, written, a, b);
      written += b - a;
    }
    return out.subarray(0, written);
  }

  /** Bytes from absolute offset `cursor`, at most `max`; `dropped` counts bytes lost to the ring before it. */
  read(cursor: number, max: number): { text: string; next: number; dropped: number } {
    const from = Math.min(Math.max(cursor, this.#start), this.#total);
    const dropped = Math.max(0, from - cursor);
    const to = Math.min(this.#total, from + max);
    const slice = this.#copy(from, to);
    // Never split a UTF-8 sequence: stop before a cut one.
    let end = slice.length;
    if (to < this.#total) {
      let i = end - 1;
      let cont = 0;
      while (i >= 0 && cont < 3 && (slice[i] & 0xc0) === 0x80) {
        i--;
        cont++;
      }
      if (i >= 0 && slice[i] >= 0xc0) {
        const need = slice[i] >= 0xf0 ? 4 : slice[i] >= 0xe0 ? 3 : 2;
        if (cont + 1 < need && i > 0) end = i;
      }
    }
    return { text: slice.subarray(0, end).toString('utf8'), next: from + end, dropped };
  }

  /** The whole output when it fits in `max` bytes, else its head and tail with the gap announced. */
  headAndTail(max: number): string {
    if (this.#total <= max) return this.#copy(0, this.#total).toString('utf8');
    const half = Math.floor(max / 2);
    const head = Buffer.concat(this.#head)
      .subarray(0, half)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    const tail = this.#copy(this.#total - Math.min(half, this.#held), this.#total)
      .toString('utf8')
      .replace(/^\uFFFD/, '');
    const omitted = this.#total - Buffer.byteLength(head) - Buffer.byteLength(tail);
    return `${head}\n… [${omitted} bytes omitted] …\n${tail}`;
  }
}
