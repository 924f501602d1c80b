/**
 * Argument → text, as every protocol puts it on the wire (docs/design/transports.md#stringify):
 * strings as-is, numbers `String(n)`, booleans `true`/`false`, objects and arrays compact JSON.
 * Returns undefined for null/undefined (callers omit such arguments).
 */
export function argToText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Parses text as JSON when it looks like JSON, else returns the text. */
export function parseJsonOrText(text: string): unknown {
  const t = text.trim();
  if (t === '') return text;
  const c = t[0];
  if (
    c === '{' ||
    c === '[' ||
    c === '"' ||
    c === '-' ||
    (c >= '0' && c <= '9') ||
    t === 'true' ||
    t === 'false' ||
    t === 'null'
  ) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}
