function replacer(this: unknown, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON ran, so Buffers are caught too.
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Uint8Array) return `[binary: ${raw.byteLength} bytes]`;
  return typeof value === 'bigint' ? value.toString() : value;
}

/** The text a model reads for a tool's result: strings as they are, bytes summarised, everything else as JSON. */
export function toolOutputText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '(no output)';
  if (value instanceof Uint8Array) return `[binary output: ${value.byteLength} bytes]`;
  try {
    return JSON.stringify(value, replacer) ?? String(value);
  } catch {
    return String(value);
  }
}
