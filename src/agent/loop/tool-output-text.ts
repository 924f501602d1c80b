import type { MediaContent } from '../messages.js';

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

/** An MCP-style content item: `{ type: "image" | "audio", data: <base64>, mimeType }`. */
function mediaItem(value: unknown): MediaContent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as { type?: unknown; data?: unknown; mimeType?: unknown; mediaType?: unknown };
  const mediaType =
    typeof v.mimeType === 'string' ? v.mimeType : typeof v.mediaType === 'string' ? v.mediaType : undefined;
  if ((v.type === 'image' || v.type === 'audio') && typeof v.data === 'string' && mediaType)
    return { type: v.type, mediaType, data: v.data };
  return undefined;
}

const MAGIC: Array<[string, number[]]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
];

/** Raw bytes that are a known image format. */
function imageBytes(value: unknown): MediaContent | undefined {
  if (!(value instanceof Uint8Array)) return undefined;
  const isWebp =
    value.byteLength > 12 &&
    Buffer.from(value.subarray(0, 4)).toString('latin1') === 'RIFF' &&
    Buffer.from(value.subarray(8, 12)).toString('latin1') === 'WEBP';
  const type = isWebp ? 'image/webp' : MAGIC.find(([, sig]) => sig.every((b, i) => value[i] === b))?.[0];
  return type ? { type: 'image', mediaType: type, data: Buffer.from(value).toString('base64') } : undefined;
}

/**
 * Binary data that is not an image or sound (`{ type: "binary", mimeType, data }`, e.g. an HTTP tool answering
 * application/pdf): a note in the text, never the base64 itself (docs/design/agent.md#media).
 */
function binaryNote(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as { type?: unknown; data?: unknown; mimeType?: unknown };
  if (v.type !== 'binary' || typeof v.data !== 'string' || typeof v.mimeType !== 'string') return undefined;
  return `[binary ${v.mimeType}, ${Math.floor((v.data.length * 3) / 4)} bytes base64-decoded: not shown to the model]`;
}

function placeholder(m: MediaContent): string {
  return `[${m.type} ${m.mediaType}, ${Math.floor((m.data.length * 3) / 4)} bytes base64-decoded: attached]`;
}

/**
 * A tool result split into what the model reads as text and the images/sounds it gets as native blocks
 * (docs/design/agent.md#media): MCP-style `{ type: "image" | "audio", data, mimeType }` items (alone, in an
 * array, or in a `content` array) and raw image bytes. Each is replaced by a short placeholder in the text.
 */
export function toolOutputParts(value: unknown): { text: string; media: MediaContent[] } {
  const media: MediaContent[] = [];
  const take = (v: unknown): unknown => {
    const note = binaryNote(v);
    if (note) return note;
    const m = mediaItem(v) ?? imageBytes(v);
    if (!m) return v;
    media.push(m);
    return placeholder(m);
  };
  let shaped: unknown = take(value);
  if (Array.isArray(value)) shaped = value.map(take);
  else if (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Uint8Array) &&
    Array.isArray((value as { content?: unknown }).content) &&
    shaped === value
  ) {
    shaped = { ...(value as object), content: (value as { content: unknown[] }).content.map(take) };
  }
  return { text: toolOutputText(shaped), media };
}
