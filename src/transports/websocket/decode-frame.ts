/** One WebSocket message as received. */
export interface RawFrame {
  data: Buffer;
  isBinary: boolean;
}

/** A decoded frame: the value to return and, when the frame is a JSON object, that object (for envelopes). */
export interface DecodedFrame {
  value: unknown;
  /** The frame parsed as a JSON object (`request_id`, `type`, `result`, `error` live here). */
  envelope: Record<string, unknown> | undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (text.trimStart()[0] !== '{') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Decodes a frame by `response_format` (docs/design/transports.md#websocket): `json` → parsed (fallback string);
 * `text` → string (binary as UTF-8); `raw` → string for text frames, Uint8Array for binary;
 * null → text frames parsed as JSON when possible else string, binary → Uint8Array.
 */
export function decodeFrame(frame: RawFrame, format: 'json' | 'text' | 'raw' | null): DecodedFrame {
  const asText = !frame.isBinary || format === 'json' || format === 'text';
  const text = asText ? frame.data.toString('utf8') : undefined;
  const envelope = text !== undefined ? parseObject(text) : undefined;
  let value: unknown;
  if (text === undefined) value = new Uint8Array(frame.data);
  else if (format === 'text' || format === 'raw') value = text;
  else value = envelope ?? parseJson(text);
  return { value, envelope };
}
