/**
 * How a stream's end is judged (docs/design/transports.md#cut-off-streams): a peer that stops in the middle of
 * a message has cut the stream off, and the partial data must never pass for a complete result.
 */
import { TransportError, type UtcpErrorCode } from '../../core/errors.js';

/**
 * The error for a stream cut off. `how` says what was missing ("in the middle of a line");
 * `code` is TRANSPORT_FAILED when the connection failed, PROTOCOL_ERROR when it closed inside a message.
 */
export function streamCutOff(
  what: string,
  how: string,
  options: { code?: UtcpErrorCode; cause?: unknown } = {},
): TransportError {
  return new TransportError(`${what}: the stream was cut off ${how}; the data received is incomplete`, {
    code: options.code ?? 'PROTOCOL_ERROR',
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
  });
}

/**
 * True when a last line that arrived without its newline is still a whole item: a JSON value that closes
 * itself (an object, array or string, or `true` / `false` / `null`). A bare number could be a prefix of a
 * longer one and anything else is a partial line, so both count as cut off.
 */
export function isCompleteLastLine(text: string): boolean {
  const t = text.trim();
  if (t === '') return true;
  const last = t[t.length - 1];
  const selfClosing = last === '}' || last === ']' || last === '"' || t === 'true' || t === 'false' || t === 'null';
  if (!selfClosing) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}
