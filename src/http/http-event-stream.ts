import { createParser, type EventSourceParser } from 'eventsource-parser';
import { UtcpError } from '../core/errors.js';

/** One dispatched server-sent event. */
export interface ServerSentEvent {
  /** `event` field, `"message"` when absent. */
  type: string;
  data: string;
  id?: string;
}

/**
 * Incremental `text/event-stream` decoding (WHATWG rules via eventsource-parser): UTF-8 decoded
 * across chunk boundaries, CR/LF/CRLF line ends, comments, `id` and `retry` tracked.
 * Events with empty data are not dispatched (docs/design/transports.md#sse-parsing). One event above `maxItemBytes` fails.
 */
export class EventStreamDecoder {
  /** Last `id` seen (sent back as `Last-Event-ID` on reconnect). */
  lastEventId: string | undefined;
  /** Last `retry` the server asked for, in ms. */
  retryMs: number | undefined;
  readonly #maxItemBytes: number;
  readonly #what: string;
  #decoder = new TextDecoder('utf-8');
  #parser: EventSourceParser;
  #pending: ServerSentEvent[] = [];
  #error: UtcpError | undefined;
  /** Cut-off tracking: a field line arrived since the last blank line (an event is being built). */
  #eventOpen = false;
  /** What the current line is so far: nothing yet, a comment, or a field. */
  #line: 'empty' | 'comment' | 'field' = 'empty';
  /** The last character was CR (a following LF belongs to the same line end). */
  #afterCr = false;

  constructor(maxItemBytes: number, what: string) {
    this.#maxItemBytes = maxItemBytes;
    this.#what = what;
    this.#parser = this.#createParser();
  }

  #createParser(): EventSourceParser {
    return createParser({
      maxBufferSize: this.#maxItemBytes,
      onEvent: (event) => {
        if (event.id !== undefined) this.lastEventId = event.id;
        if (event.data === '') return;
        if (Buffer.byteLength(event.data, 'utf8') > this.#maxItemBytes) {
          this.#error ??= this.#tooLarge();
          return;
        }
        this.#pending.push({
          type: event.event ?? 'message',
          data: event.data,
          ...(event.id !== undefined ? { id: event.id } : {}),
        });
      },
      onRetry: (ms) => {
        this.retryMs = ms;
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#error ??= this.#tooLarge();
      },
    });
  }

  #tooLarge(): UtcpError {
    return new UtcpError(
      'RESPONSE_TOO_LARGE',
      `${this.#what}: an event is larger than the ${this.#maxItemBytes}-byte stream item limit`,
    );
  }

  /**
   * Feeds bytes; returns the events completed by them. Call `throwIfFailed()` after handling them:
   * events before an oversized one are still delivered.
   */
  push(chunk: Uint8Array): ServerSentEvent[] {
    this.throwIfFailed();
    const text = this.#decoder.decode(chunk, { stream: true });
    if (text) {
      this.#track(text);
      this.#parser.feed(text);
    }
    const out = this.#pending;
    this.#pending = [];
    return out;
  }

  /** @throws RESPONSE_TOO_LARGE when an event passed the stream item limit. */
  throwIfFailed(): void {
    if (this.#error) throw this.#error;
  }

  /**
   * Call when the body has ended: true when it ended inside an event (a field line without the blank line that
   * dispatches it, a partial line, or a partial UTF-8 character) — the stream was cut off
   * (docs/design/transports.md#cut-off-streams). Comment lines alone never count.
   */
  endedMidEvent(): boolean {
    const rest = this.#decoder.decode();
    if (rest) this.#track(rest);
    return this.#eventOpen || this.#line === 'field';
  }

  /** Follows line and event boundaries with the event-stream rules (CR, LF and CRLF end a line); linear in `text`. */
  #track(text: string): void {
    const n = text.length;
    let lf = -2;
    let cr = -2;
    let i = 0;
    while (i < n) {
      if (this.#afterCr) {
        this.#afterCr = false;
        if (text.charCodeAt(i) === 0x0a) {
          i++;
          continue;
        }
      }
      if (this.#line === 'empty') {
        const c = text.charCodeAt(i);
        if (c === 0x0a || c === 0x0d) {
          this.#eventOpen = false; // a blank line: the event (if any) was dispatched
          this.#afterCr = c === 0x0d;
          i++;
          continue;
        }
        this.#line = c === 0x3a ? 'comment' : 'field';
      }
      // The rest of the line cannot change its kind: jump to its end (native searches, each position seen once).
      if (lf !== -1 && lf < i) lf = text.indexOf('\n', i);
      if (cr !== -1 && cr < i) cr = text.indexOf('\r', i);
      const lineEnd = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (lineEnd === -1) return; // the line goes on in the next chunk
      if (this.#line === 'field') this.#eventOpen = true;
      this.#line = 'empty';
      this.#afterCr = lineEnd === cr;
      i = lineEnd + 1;
    }
  }

  /** Starts a new connection: partial data is dropped; `lastEventId` and `retryMs` are kept. */
  reset(): void {
    this.#eventOpen = false;
    this.#line = 'empty';
    this.#afterCr = false;
    this.#decoder = new TextDecoder('utf-8');
    this.#parser = this.#createParser();
    this.#pending = [];
    this.#error = undefined;
  }
}

/** An event's item: `JSON.parse(data)`, else the data string. */
export function eventItem(event: ServerSentEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch {
    return event.data;
  }
}
