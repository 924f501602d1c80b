/**
 * Receive framing of the tcp transport (docs/design/transports.md#tcp). Every reader stops at its size limit
 * with RESPONSE_TOO_LARGE and treats a connection closed too early as PROTOCOL_ERROR.
 */
import { TransportError } from '../../core/errors.js';
import type { ByteReader } from './byte-reader.js';
import { isCompleteLastLine, streamCutOff } from '../shared/stream-end.js';
import { JsonValueScanner } from './json-value-scanner.js';

function tooLarge(what: string, limit: number | bigint, size?: number | bigint): TransportError {
  const got = size !== undefined ? ` (${size} bytes)` : '';
  return new TransportError(`${what}: response exceeds the ${limit}-byte limit${got}`, { code: 'RESPONSE_TOO_LARGE' });
}

function closedEarly(what: string, detail: string): TransportError {
  return new TransportError(`${what}: connection closed ${detail}`, { code: 'PROTOCOL_ERROR' });
}

/** Exactly `length` bytes. */
export async function readExact(reader: ByteReader, length: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < length) {
    const chunk = await reader.next();
    if (chunk === null) throw closedEarly(what, `after ${total} of ${length} bytes`);
    const need = length - total;
    if (chunk.length > need) {
      chunks.push(chunk.subarray(0, need));
      reader.unshift(chunk.subarray(need));
      total = length;
    } else {
      chunks.push(chunk);
      total += chunk.length;
    }
  }
  return Buffer.concat(chunks, length);
}

/** An unsigned N-byte length, then that many bytes. A length above `maxBytes` is rejected before reading the body. */
export async function readLengthPrefixed(
  reader: ByteReader,
  prefixBytes: 1 | 2 | 4 | 8,
  endian: 'big' | 'little',
  maxBytes: number,
  what: string,
): Promise<Buffer> {
  const prefix = await readExact(reader, prefixBytes, what);
  let length: bigint;
  if (prefixBytes === 1) length = BigInt(prefix.readUInt8(0));
  else if (prefixBytes === 2) length = BigInt(endian === 'big' ? prefix.readUInt16BE(0) : prefix.readUInt16LE(0));
  else if (prefixBytes === 4) length = BigInt(endian === 'big' ? prefix.readUInt32BE(0) : prefix.readUInt32LE(0));
  else length = endian === 'big' ? prefix.readBigUInt64BE(0) : prefix.readBigUInt64LE(0);
  if (length > BigInt(maxBytes)) throw tooLarge(what, maxBytes, length);
  return readExact(reader, Number(length), what);
}

/** Result of reading up to a delimiter: `delimited` is false when the stream ended first. */
export interface DelimitedChunk {
  message: Buffer;
  delimited: boolean;
}

/**
 * Bytes up to (not including) `delimiter`; the bytes after it stay in the reader.
 * At end of stream returns the rest with `delimited: false`, or null when nothing is left.
 */
export async function readDelimited(
  reader: ByteReader,
  delimiter: Buffer,
  maxBytes: number,
  what: string,
): Promise<DelimitedChunk | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  let tail: Buffer = Buffer.alloc(0);
  for (;;) {
    const chunk = await reader.next();
    if (chunk === null) return total === 0 ? null : { message: Buffer.concat(chunks, total), delimited: false };
    // Search the new chunk plus the last delimiter.length-1 bytes, so a delimiter split across chunks is found.
    const window = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    const at = window.indexOf(delimiter);
    if (at >= 0) {
      const messageLength = total - tail.length + at;
      if (messageLength > maxBytes) throw tooLarge(what, maxBytes);
      const all = Buffer.concat([...chunks, chunk], total + chunk.length);
      reader.unshift(all.subarray(messageLength + delimiter.length));
      return { message: all.subarray(0, messageLength), delimited: true };
    }
    chunks.push(chunk);
    total += chunk.length;
    if (total > maxBytes + delimiter.length) throw tooLarge(what, maxBytes);
    tail = window.subarray(Math.max(0, window.length - (delimiter.length - 1)));
  }
}

/** Bytes up to a delimiter that must arrive before the connection closes. */
export async function readUntilDelimiter(
  reader: ByteReader,
  delimiter: Buffer,
  maxBytes: number,
  what: string,
): Promise<Buffer> {
  const chunk = await readDelimited(reader, delimiter, maxBytes, what);
  if (chunk === null) throw closedEarly(what, 'before any response byte');
  if (!chunk.delimited) throw closedEarly(what, 'before the message delimiter');
  return chunk.message;
}

/**
 * Everything until the server closes, or until `capBytes` (the rest is discarded).
 * When the read is cut short by `isTimedOut()` after at least one byte, returns what arrived.
 */
export async function readToEnd(reader: ByteReader, capBytes: number, isTimedOut: () => boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    while (total < capBytes) {
      const chunk = await reader.next();
      if (chunk === null) break;
      const keep = Math.min(chunk.length, capBytes - total);
      chunks.push(keep === chunk.length ? chunk : chunk.subarray(0, keep));
      total += keep;
    }
  } catch (error) {
    if (!(isTimedOut() && total > 0)) throw error;
  }
  return Buffer.concat(chunks, total);
}

/** One complete top-level JSON value; bytes after it stay in the reader. */
export async function readJsonValue(reader: ByteReader, maxBytes: number, what: string): Promise<Buffer> {
  const scanner = new JsonValueScanner();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = await reader.next();
    if (chunk === null) {
      const end = scanner.end();
      if (end >= 0) return Buffer.concat(chunks, total);
      throw closedEarly(what, scanner.started ? 'in the middle of a JSON value' : 'before any response byte');
    }
    const end = scanner.push(chunk);
    chunks.push(chunk);
    total += chunk.length;
    if (end >= 0) {
      if (end > maxBytes) throw tooLarge(what, maxBytes);
      const all = Buffer.concat(chunks, total);
      reader.unshift(all.subarray(end));
      return all.subarray(0, end);
    }
    if (total > maxBytes) throw tooLarge(what, maxBytes);
  }
}

const NEWLINE = Buffer.from('\n');

/**
 * NDJSON lines until the server closes; blank lines are skipped, a trailing `\r` is removed. A last line
 * without its newline must be a whole JSON value, else the stream was cut off (docs/design/transports.md#cut-off-streams).
 */
export async function* readLines(reader: ByteReader, maxLineBytes: number, what: string): AsyncGenerator<Buffer> {
  for (;;) {
    const chunk = await readDelimited(reader, NEWLINE, maxLineBytes, what);
    if (chunk === null) return;
    if (!chunk.delimited && !isCompleteLastLine(chunk.message.toString('utf8'))) {
      throw streamCutOff(what, 'in the middle of a line (the connection closed before its newline)');
    }
    let line = chunk.message;
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    if (line.toString('utf8').trim() !== '') yield line;
    if (!chunk.delimited) return;
  }
}
