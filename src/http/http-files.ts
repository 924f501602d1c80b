/**
 * Bytes in HTTP requests (docs/design/transports.md#http-files). A caller passes bytes as base64 text (what a model can
 * write in JSON) or, for a file, as `{ data, filename?, content_type? }` with base64 `data`; in-process callers may
 * pass a `Uint8Array`, which the client turns into base64 before validation. Files go out as real multipart file parts
 * (`filename=`, their own Content-Type), one part per file of an array; a raw body goes out as its bytes.
 */
import { randomBytes } from 'node:crypto';
import { UtcpError } from '../core/errors.js';
import { argToText } from '../core/stringify.js';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decodes base64 (standard or URL-safe, whitespace ignored), or throws INVALID_ARGUMENTS naming `what`. */
export function decodeBase64(text: string, what: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1)
    throw new UtcpError('INVALID_ARGUMENTS', `${what} must be base64-encoded bytes`);
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

interface FilePart {
  data: Buffer;
  filename: string;
  contentType: string;
}

function filePart(value: unknown, field: string): FilePart {
  if (value instanceof Uint8Array)
    return { data: Buffer.from(value), filename: field, contentType: 'application/octet-stream' };
  if (typeof value === 'string')
    return {
      data: decodeBase64(value, `File argument ${field}`),
      filename: field,
      contentType: 'application/octet-stream',
    };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const f = value as { data?: unknown; filename?: unknown; content_type?: unknown };
    const data =
      f.data instanceof Uint8Array
        ? Buffer.from(f.data)
        : typeof f.data === 'string'
          ? decodeBase64(f.data, `File argument ${field}.data`)
          : undefined;
    if (data)
      return {
        data,
        filename: typeof f.filename === 'string' && f.filename !== '' ? f.filename : field,
        contentType:
          typeof f.content_type === 'string' && f.content_type !== '' ? f.content_type : 'application/octet-stream',
      };
  }
  throw new UtcpError(
    'INVALID_ARGUMENTS',
    `File argument ${field} must be base64 text or { data: <base64>, filename?, content_type? }`,
  );
}

/** A quoted-string parameter value: quotes and line breaks percent-encoded, as browsers do. */
function quoted(text: string): string {
  return text.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/** A header value without line breaks (a content type from the caller). */
function headerSafe(text: string): string {
  if (/[\r\n\0]/.test(text)) throw new UtcpError('INVALID_ARGUMENTS', 'A file content_type must not contain CR/LF');
  return text;
}

/**
 * A `multipart/form-data` body: `fileFields` as file parts (an array gives one part per file), other values as text
 * parts (strings as they are, the rest as JSON).
 */
export function encodeMultipart(
  body: Record<string, unknown>,
  fileFields: ReadonlySet<string>,
): { body: Uint8Array; contentType: string } {
  const boundary = `----utcpkit${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (fileFields.has(name) && value !== undefined && value !== null) {
      for (const item of Array.isArray(value) ? value : [value]) {
        const file = filePart(item, name);
        chunks.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"; filename="${quoted(file.filename)}"\r\nContent-Type: ${headerSafe(file.contentType)}\r\n\r\n`,
          ),
          file.data,
          Buffer.from('\r\n'),
        );
      }
      continue;
    }
    const text = argToText(value);
    if (text === undefined) continue;
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${text}\r\n`),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
