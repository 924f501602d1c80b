/**
 * Splits a stdio MCP server's stdout into JSON-RPC lines with bounded work
 * (docs/design/transports.md#mcp-stdio-bounds): a line longer than `maxLineBytes` is refused as soon as it grows past the cap
 * (never buffered or parsed), and lines that are not JSON-RPC ("junk") are budgeted per second,
 * in lines and in bytes. Each byte is scanned for the newline once, so a flood costs O(bytes).
 */

export interface LineReaderLimits {
  /** The longest line accepted, in bytes (without the newline). */
  maxLineBytes: number;
  /** Junk lines tolerated per one-second window. */
  maxJunkLinesPerSecond: number;
  /** Junk bytes tolerated per one-second window. */
  maxJunkBytesPerSecond: number;
}

/** Why the reader gave up; the session is dropped with this reason. */
export type LineReaderFailure =
  | { kind: 'line-too-long'; limit: number }
  | { kind: 'junk-flood'; lines: number; bytes: number };

const NEWLINE = 0x0a;

export class StdioLineReader {
  readonly #limits: LineReaderLimits;
  readonly #now: () => number;
  #parts: Buffer[] = [];
  #pendingBytes = 0;
  #windowStart = 0;
  #junkLines = 0;
  #junkBytes = 0;
  #failure: LineReaderFailure | undefined;

  constructor(limits: LineReaderLimits, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#now = now;
  }

  get failure(): LineReaderFailure | undefined {
    return this.#failure;
  }

  /**
   * Feeds one chunk; calls `onLine` for every complete line (trailing CR removed). `onLine` returns
   * false for a junk line (not JSON-RPC), which counts against the budget. Returns the failure once
   * a bound is exceeded; later chunks are ignored.
   */
  push(chunk: Buffer, onLine: (line: string) => boolean): LineReaderFailure | undefined {
    if (this.#failure) return this.#failure;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.#pendingBytes + piece.length > this.#limits.maxLineBytes)
        return this.#fail({ kind: 'line-too-long', limit: this.#limits.maxLineBytes });
      let line: string;
      if (this.#parts.length === 0) line = piece.toString('utf8');
      else {
        this.#parts.push(piece);
        line = Buffer.concat(this.#parts, this.#pendingBytes + piece.length).toString('utf8');
        this.#parts = [];
      }
      this.#pendingBytes = 0;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      // A JSON-RPC line starts with a printable character: only others can be blank.
      if (line.length === 0 || (line.charCodeAt(0) <= 0x20 && line.trim() === '')) continue;
      if (!onLine(line) && this.#countJunk(Buffer.byteLength(line))) return this.#failure;
    }
    const rest = chunk.length - start;
    if (rest > 0) {
      if (this.#pendingBytes + rest > this.#limits.maxLineBytes)
        return this.#fail({ kind: 'line-too-long', limit: this.#limits.maxLineBytes });
      this.#parts.push(start === 0 ? chunk : chunk.subarray(start));
      this.#pendingBytes += rest;
    }
    return undefined;
  }

  clear(): void {
    this.#parts = [];
    this.#pendingBytes = 0;
  }

  /** Counts one junk line; true when the budget of the current window is exceeded. */
  #countJunk(bytes: number): boolean {
    const now = this.#now();
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#junkLines = 0;
      this.#junkBytes = 0;
    }
    this.#junkLines += 1;
    this.#junkBytes += bytes;
    if (this.#junkLines > this.#limits.maxJunkLinesPerSecond || this.#junkBytes > this.#limits.maxJunkBytesPerSecond) {
      this.#fail({ kind: 'junk-flood', lines: this.#junkLines, bytes: this.#junkBytes });
      return true;
    }
    return false;
  }

  #fail(failure: LineReaderFailure): LineReaderFailure {
    this.#failure = failure;
    this.clear();
    return failure;
  }
}
