import { TransportError } from '../../core/errors.js';

type State = 'before' | 'container' | 'string' | 'number' | 'literal' | 'done';

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER_BYTES = new Set([...'0123456789+-.eE'].map((c) => c.charCodeAt(0)));
const LITERALS: Record<number, string> = { 0x74: 'true', 0x66: 'false', 0x6e: 'null' };

/**
 * Finds where the first complete top-level JSON value ends in a byte stream fed chunk by chunk.
 * Tracks strings, escapes and nesting depth; does not validate the value (JSON.parse does that).
 * Structural characters are ASCII, so scanning UTF-8 bytes is exact.
 */
export class JsonValueScanner {
  #state: State = 'before';
  #depth = 0;
  #inString = false;
  #escaped = false;
  #literal = '';
  #literalPos = 0;
  #offset = 0;

  /**
   * Feeds the next chunk. Returns the end offset (exclusive, counted from the first byte ever fed)
   * of the first complete value, or -1 while it is incomplete.
   * @throws TransportError (PROTOCOL_ERROR) when the bytes cannot start or continue a JSON value.
   */
  push(chunk: Uint8Array): number {
    const base = this.#offset;
    this.#offset += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      switch (this.#state) {
        case 'done':
          return -1;
        case 'before':
          if (WHITESPACE.has(b)) continue;
          this.#start(b);
          break;
        case 'container':
          if (this.#inString) {
            if (this.#escaped) this.#escaped = false;
            else if (b === 0x5c) this.#escaped = true;
            else if (b === 0x22) this.#inString = false;
          } else if (b === 0x22) this.#inString = true;
          else if (b === 0x7b || b === 0x5b) this.#depth++;
          else if (b === 0x7d || b === 0x5d) {
            if (--this.#depth === 0) return this.#finish(base + i + 1);
          }
          break;
        case 'string':
          if (this.#escaped) this.#escaped = false;
          else if (b === 0x5c) this.#escaped = true;
          else if (b === 0x22) return this.#finish(base + i + 1);
          break;
        case 'number':
          if (!NUMBER_BYTES.has(b)) return this.#finish(base + i);
          break;
        case 'literal':
          if (b !== this.#literal.charCodeAt(this.#literalPos)) throw malformed();
          if (++this.#literalPos === this.#literal.length) return this.#finish(base + i + 1);
          break;
      }
    }
    return -1;
  }

  /** At end of input: the end offset when the value is complete (a trailing number), else -1. */
  end(): number {
    return this.#state === 'number' ? this.#offset : -1;
  }

  /** Whether any non-whitespace byte has been seen. */
  get started(): boolean {
    return this.#state !== 'before';
  }

  #start(b: number): void {
    if (b === 0x7b || b === 0x5b) {
      this.#state = 'container';
      this.#depth = 1;
    } else if (b === 0x22) {
      this.#state = 'string';
    } else if (b === 0x2d || (b >= 0x30 && b <= 0x39)) {
      this.#state = 'number';
    } else if (LITERALS[b]) {
      this.#state = 'literal';
      this.#literal = LITERALS[b];
      this.#literalPos = 1;
    } else {
      throw malformed();
    }
  }

  #finish(end: number): number {
    this.#state = 'done';
    return end;
  }
}

function malformed(): TransportError {
  return new TransportError('TCP response is not a JSON value (json framing)', { code: 'PROTOCOL_ERROR' });
}
