/**
 * Redaction of substituted values (docs/design/threat-model.md#redaction). Every value the client
 * substitutes into a template (variables: tokens, keys, passwords) is remembered by the client's
 * redactor, and every error and log line that leaves the client passes through it, whatever the
 * value landed in (URL path or query, header, body, CLI output) and in its common encodings.
 * One redactor per client: clients never share what they know.
 */
import type { LogFn, Logger } from './logger.js';

export const REDACTED = '[REDACTED]';
/** Shorter values are not redacted: they would mangle every message and are no secrets of any strength. */
export const MIN_REDACTED_LENGTH = 4;
const MAX_DEPTH = 6;

function encodings(value: string): string[] {
  const out = new Set<string>([value]);
  try {
    out.add(encodeURIComponent(value));
    out.add(encodeURIComponent(value).replace(/%20/g, '+'));
    out.add(encodeURI(value));
  } catch {
    // lone surrogates: no URL form
  }
  out.add(JSON.stringify(value).slice(1, -1));
  return [...out].filter((v) => v.length >= MIN_REDACTED_LENGTH);
}

export class Redactor {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;

  /** Remembers values to redact from now on. */
  add(values: Iterable<string>): void {
    for (const value of values) {
      if (typeof value !== 'string' || value.length < MIN_REDACTED_LENGTH || this.#values.has(value)) continue;
      this.#values.add(value);
      this.#pattern = undefined;
    }
  }

  get size(): number {
    return this.#values.size;
  }

  #regex(): RegExp | undefined {
    if (this.#values.size === 0) return undefined;
    if (!this.#pattern) {
      const all = [...new Set([...this.#values].flatMap(encodings))].sort((a, b) => b.length - a.length);
      this.#pattern = new RegExp(all.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
    }
    return this.#pattern;
  }

  text(text: string): string {
    const re = this.#regex();
    return re && text.length >= MIN_REDACTED_LENGTH ? text.replace(re, REDACTED) : text;
  }

  /**
   * A copy of `data` with every string redacted (plain objects and arrays); errors become redacted messages. Past
   * MAX_DEPTH levels an object or array is replaced by `[REDACTED]` whole: it is not walked, so it is not passed on.
   */
  data<T>(data: T, depth = 0): T {
    if (this.#values.size === 0) return data;
    if (typeof data === 'string') return this.text(data) as T;
    if (typeof data !== 'object' || data === null) return data;
    if (depth > MAX_DEPTH) return REDACTED as T;
    if (data instanceof Error) return this.error(data);
    if (Array.isArray(data)) return data.map((v) => this.data(v, depth + 1)) as T;
    if (Object.getPrototypeOf(data) !== Object.prototype && Object.getPrototypeOf(data) !== null) return data;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(data)) out[k] = this.data(v, depth + 1);
    return out as T;
  }

  /**
   * Redacts an error in place (message, stack, string fields, issues, nested errors, the cause chain) and returns it.
   * A worklist, not recursion: a cause chain of any length is followed (docs/design/threat-model.md#edges-and-nesting).
   */
  error<T>(error: T): T {
    if (this.#values.size === 0) return error;
    const seen = new Set<unknown>();
    const pending: unknown[] = [error];
    while (pending.length > 0) {
      const next = pending.pop();
      if (typeof next !== 'object' || next === null || seen.has(next)) continue;
      seen.add(next);
      this.#redactFields(next as Record<string, unknown>, pending);
    }
    return error;
  }

  /** Redacts the string fields of one error in place; queues its nested errors, cause and aggregated errors. */
  #redactFields(target: Record<string, unknown>, pending: unknown[]): void {
    for (const key of ['message', 'stack', ...Object.keys(target)]) {
      let value: unknown;
      try {
        value = target[key];
      } catch {
        continue;
      }
      let next: unknown = value;
      if (typeof value === 'string') next = this.text(value);
      // Structured fields a server fills (HttpStatusError.problem, ToolExecutionError.details) are redacted like data.
      else if ((key === 'issues' || key === 'problem' || key === 'details') && typeof value === 'object' && value)
        next = this.data(value);
      else if (key !== 'cause' && value instanceof Error) pending.push(value);
      if (next !== value) {
        try {
          Object.defineProperty(target, key, {
            value: next,
            writable: true,
            configurable: true,
            enumerable: Object.keys(target).includes(key),
          });
        } catch {
          // a frozen or exotic object: leave it
        }
      }
    }
    if ('cause' in target) pending.push(target.cause);
    if (target instanceof AggregateError) for (const e of target.errors) pending.push(e);
  }
}

/** A logger whose messages and data pass through `redactor` before reaching `logger`. */
export function redactingLogger(logger: Required<Logger>, redactor: Redactor): Required<Logger> {
  // Library code calls (message, data); the (fields, message) shape of LogFn is accepted too.
  const wrap = (level: keyof Logger) =>
    ((a: unknown, b?: unknown) => {
      const [message, data] = typeof a === 'string' ? [a, b] : [typeof b === 'string' ? b : '', a];
      const fields =
        typeof data === 'object' && data !== null ? redactor.data(data as Record<string, unknown>) : undefined;
      logger[level](redactor.text(message), fields);
    }) as LogFn;
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
