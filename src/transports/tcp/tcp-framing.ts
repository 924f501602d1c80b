import { UtcpError } from '../../core/errors.js';
import type { TcpCallTemplate } from './template.js';
import { decodeEscapes } from './decode-escapes.js';

export type FramingStrategy = NonNullable<TcpCallTemplate['framing_strategy']>;

/** The framing fields of a tcp template with their defaults applied (docs/design/transports.md#tcp). */
export interface TcpFraming {
  strategy: FramingStrategy;
  prefixBytes: 1 | 2 | 4 | 8;
  endian: 'big' | 'little';
  delimiter: Buffer;
  fixedLength: number;
  /** Cap of `stream` framing, in bytes. @default 65536 */
  maxResponseSize: number;
  halfClose: boolean;
}

const STRATEGIES = new Set<FramingStrategy>(['stream', 'length_prefix', 'delimiter', 'fixed_length', 'json', 'ndjson']);

function invalid(message: string): UtcpError {
  return new UtcpError('INVALID_CONFIG', `tcp template: ${message}`);
}

/** Applies defaults and checks the framing fields. @throws UtcpError (INVALID_CONFIG) */
export function resolveTcpFraming(template: TcpCallTemplate): TcpFraming {
  const strategy = template.framing_strategy ?? 'stream';
  if (!STRATEGIES.has(strategy)) throw invalid(`unknown framing_strategy "${String(strategy)}"`);
  const prefixBytes = template.length_prefix_bytes ?? 4;
  if (![1, 2, 4, 8].includes(prefixBytes)) throw invalid('length_prefix_bytes must be 1, 2, 4 or 8');
  const endian = template.length_prefix_endian ?? 'big';
  if (endian !== 'big' && endian !== 'little') throw invalid('length_prefix_endian must be "big" or "little"');
  const rawDelimiter = template.message_delimiter ?? '\u0000';
  const delimiterText = template.interpret_escape_sequences === false ? rawDelimiter : decodeEscapes(rawDelimiter);
  const delimiter = Buffer.from(delimiterText, 'utf8');
  if (strategy === 'delimiter' && delimiter.length === 0) throw invalid('message_delimiter must not be empty');
  const fixedLength = template.fixed_message_length ?? 0;
  if (strategy === 'fixed_length' && !(Number.isInteger(fixedLength) && fixedLength > 0)) {
    throw invalid('fixed_length framing needs a positive integer fixed_message_length');
  }
  const maxResponseSize = template.max_response_size ?? 65536;
  if (!(Number.isInteger(maxResponseSize) && maxResponseSize > 0))
    throw invalid('max_response_size must be a positive integer');
  return {
    strategy,
    prefixBytes,
    endian,
    delimiter,
    fixedLength,
    maxResponseSize,
    halfClose: template.half_close === true,
  };
}

/** The request bytes with send framing: a length prefix, a trailing delimiter, or nothing. */
export function encodeRequestFrame(payload: Buffer, framing: TcpFraming): Buffer {
  if (framing.strategy === 'length_prefix') {
    const n = framing.prefixBytes;
    const max = n === 8 ? Number.MAX_SAFE_INTEGER : 2 ** (8 * n) - 1;
    if (payload.length > max) {
      throw new UtcpError(
        'INVALID_ARGUMENTS',
        `TCP request of ${payload.length} bytes does not fit a ${n}-byte length prefix`,
      );
    }
    const prefix = Buffer.alloc(n);
    const big = framing.endian === 'big';
    if (n === 1) prefix.writeUInt8(payload.length, 0);
    else if (n === 2) big ? prefix.writeUInt16BE(payload.length, 0) : prefix.writeUInt16LE(payload.length, 0);
    else if (n === 4) big ? prefix.writeUInt32BE(payload.length, 0) : prefix.writeUInt32LE(payload.length, 0);
    else big ? prefix.writeBigUInt64BE(BigInt(payload.length), 0) : prefix.writeBigUInt64LE(BigInt(payload.length), 0);
    return Buffer.concat([prefix, payload]);
  }
  if (framing.strategy === 'delimiter') return Buffer.concat([payload, framing.delimiter]);
  return payload;
}
