/**
 * An on-disk copy of a large registration's search-index segment (docs/design/manual-format.md#index-cache), so that a
 * fresh process registering the same tools again (a CLI run, a serverless worker shipped with its cache) reads the
 * index instead of tokenizing every tool. Opt-in: `index_cache_dir` of the bm25 search strategy.
 *
 * A file is named after a SHA-256 key over the format version, the field weights and every indexed text (names,
 * descriptions, tags, in order), and holds that key again; a file whose key, shape or bounds do not check out is
 * ignored and rewritten. The cache only ever changes ranking input for the exact texts it was built from: the tools
 * themselves always come from the registration.
 */
import type { Tool } from '../core/types.js';

/** The part of a segment that depends only on the indexed texts (what the cache stores). */
export interface SegmentData {
  readonly lens: Float32Array;
  readonly terms: Map<string, number>;
  readonly offsets: Uint32Array;
  readonly ids: Uint16Array | Uint32Array;
  readonly tfs: Float32Array;
}

/** Bumped whenever tokenization, weighting or the file layout changes: older files then never match. */
const FORMAT = 1;
const MAGIC = 'UTCPBM25';
/** Files of this cache kept in the folder; the oldest beyond it are removed when a new one is written. */
export const MAX_CACHE_FILES = 16;
const PREFIX = 'bm25-';
const SUFFIX = '.idx';

type Fs = typeof import('node:fs');
type Crypto = typeof import('node:crypto');
type Path = typeof import('node:path');

const builtin = <T>(id: string): T => process.getBuiltinModule(id) as T;

/** The cache key of `docs` indexed with `weights`: hex SHA-256. */
export function cacheKey(docs: readonly Tool[], weights: readonly number[]): string {
  // JSON of the texts in order: unambiguous, and written by the engine's serializer rather than string by string.
  const n = docs.length;
  const names = new Array<string>(n);
  const descriptions = new Array<string>(n);
  const tags = new Array<readonly string[]>(n);
  for (let i = 0; i < n; i++) {
    const tool = docs[i];
    names[i] = tool.name;
    descriptions[i] = tool.description ?? '';
    tags[i] = tool.tags;
  }
  const text = JSON.stringify([MAGIC, FORMAT, weights, names, descriptions, tags]);
  return builtin<Crypto>('node:crypto').createHash('sha256').update(text).digest('hex');
}

function fileOf(dir: string, key: string): string {
  return builtin<Path>('node:path').join(dir, `${PREFIX}${key}${SUFFIX}`);
}

/** The cached segment for `key`, or undefined when there is none or it does not check out. Never throws. */
export function readCachedSegment(dir: string, key: string, docs: number): SegmentData | undefined {
  let buf: Buffer;
  try {
    buf = builtin<Fs>('node:fs').readFileSync(fileOf(dir, key));
  } catch {
    return undefined;
  }
  try {
    return decode(buf, key, docs);
  } catch {
    return undefined;
  }
}

/**
 * Writes the segment for `key` (to a temporary name, then renamed, so a reader never sees half a file) and trims
 * the folder to {@link MAX_CACHE_FILES}. Returns the error instead of throwing: the cache is best effort.
 */
export function writeCachedSegment(dir: string, key: string, data: SegmentData): Error | undefined {
  const fs = builtin<Fs>('node:fs');
  const path = fileOf(dir, key);
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(tmp, encode(data, key), { mode: 0o600 });
    fs.renameSync(tmp, path);
  } catch (error) {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing more to do
    }
    return error instanceof Error ? error : new Error(String(error));
  }
  trim(fs, dir, path);
  return undefined;
}

function trim(fs: Fs, dir: string, keep: string): void {
  try {
    const path = builtin<Path>('node:path');
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(PREFIX) && f.endsWith(SUFFIX))
      .map((f) => path.join(dir, f))
      .filter((f) => f !== keep)
      .map((f) => ({ f, at: fs.statSync(f).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const { f } of files.slice(MAX_CACHE_FILES - 1)) fs.rmSync(f, { force: true });
  } catch {
    // a file removed meanwhile, an unreadable folder: the cache is best effort
  }
}

/*
 * Layout: MAGIC (8 bytes) | header length (u32 LE) | header JSON | padding to 4 | lens f32[docs] |
 * offsets u32[terms + 1] | ids (u16 or u32)[count] | padding to 4 | tfs f32[count].
 * Header: { format, key, docs, count, wide, terms: string[] } (terms in id order).
 */

function encode(data: SegmentData, key: string): Buffer {
  const terms = new Array<string>(data.terms.size);
  for (const [term, id] of data.terms) terms[id] = term;
  const wide = data.ids instanceof Uint32Array;
  const count = data.tfs.length;
  const header = Buffer.from(JSON.stringify({ format: FORMAT, key, docs: data.lens.length, count, wide, terms }));
  const parts: Uint8Array[] = [Buffer.from(MAGIC, 'latin1'), u32(header.length), header, pad(12 + header.length)];
  parts.push(bytes(data.lens), bytes(data.offsets), bytes(data.ids));
  parts.push(pad(data.ids.byteLength), bytes(data.tfs));
  return Buffer.concat(parts);
}

function decode(buf: Buffer, key: string, docs: number): SegmentData | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) return undefined;
  const headerLength = buf.readUInt32LE(8);
  let at = 12 + headerLength;
  if (at > buf.length) return undefined;
  const header = JSON.parse(buf.toString('utf8', 12, at)) as {
    format?: unknown;
    key?: unknown;
    docs?: unknown;
    count?: unknown;
    wide?: unknown;
    terms?: unknown;
  };
  const { count, terms } = header;
  if (header.format !== FORMAT || header.key !== key || header.docs !== docs) return undefined;
  if (!Number.isSafeInteger(count) || (count as number) < 0) return undefined;
  if (!Array.isArray(terms) || !terms.every((t) => typeof t === 'string')) return undefined;
  const n = count as number;
  at += padLength(at);
  const take = (length: number): ArrayBuffer => {
    if (at + length > buf.length) throw new RangeError('truncated');
    const copy = buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + length) as ArrayBuffer;
    at += length;
    return copy;
  };
  const lens = new Float32Array(take(docs * 4));
  const offsets = new Uint32Array(take((terms.length + 1) * 4));
  const ids = header.wide === true ? new Uint32Array(take(n * 4)) : new Uint16Array(take(n * 2));
  at += padLength(at);
  const tfs = new Float32Array(take(n * 4));
  if (at !== buf.length) return undefined;
  // Bounds the search relies on: rows in order and inside the postings, documents inside the segment.
  if (offsets[0] !== 0 || offsets[terms.length] !== n) return undefined;
  for (let t = 0; t < terms.length; t++) if (offsets[t] > offsets[t + 1]) return undefined;
  for (let i = 0; i < n; i++) if (ids[i] >= docs || !(tfs[i] > 0)) return undefined;
  for (let d = 0; d < docs; d++) if (!(lens[d] >= 0)) return undefined;
  const map = new Map<string, number>();
  for (let t = 0; t < terms.length; t++) map.set(terms[t] as string, t);
  if (map.size !== terms.length) return undefined;
  return { lens, terms: map, offsets, ids, tfs };
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function padLength(n: number): number {
  return (4 - (n % 4)) % 4;
}

function pad(n: number): Buffer {
  return Buffer.alloc(padLength(n));
}

function bytes(a: Float32Array | Uint32Array | Uint16Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
