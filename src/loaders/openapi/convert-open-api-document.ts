/** User-facing entry: JSON/YAML text, bytes or an object → `{ manual, report }`. */
import { parseDocumentText } from '../../core/document.js';
import { UtcpError } from '../../core/errors.js';
import { resolveLimits } from '../../core/limits.js';
import type { OpenApiConverterOptions } from '../../core/transport.js';
import { convertOpenApiSpec, type OpenApiConversion } from './convert-open-api-spec.js';
import { isPlainObject } from '../../core/guards.js';

/** Options of `convertOpenApiDocument`; `manualName` defaults to the sanitised `info.title`, else `openapi`. */
export type ConvertOpenApiDocumentOptions = Partial<OpenApiConverterOptions>;

function defaultManualName(doc: Record<string, unknown>): string {
  const title = isPlainObject(doc.info) && typeof doc.info.title === 'string' ? doc.info.title : '';
  return (
    title
      .replace(/[^A-Za-z0-9_]/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_+|_+$/g, '') || 'openapi'
  );
}

/**
 * Converts an OpenAPI 2.0/3.0/3.1 document given as JSON or YAML text (UTF-8 BOM stripped; YAML 1.2
 * core schema, alias expansions capped by `limits.max_yaml_aliases`, size capped by
 * `limits.max_document_bytes`), as UTF-8 bytes, or as an already parsed object.
 * Throws `UtcpError` when the input is not an OpenAPI document or breaks the loopback rule.
 * The input is never mutated; the manual shares unchanged sub-objects with it and between tools,
 * so treat the result as read-only (`structuredClone` it before editing).
 */
export async function convertOpenApiDocument(
  input: string | Uint8Array | Record<string, unknown>,
  options: ConvertOpenApiDocumentOptions = {},
): Promise<OpenApiConversion> {
  const limits = resolveLimits(options.limits);
  let doc: unknown = input;
  if (input instanceof Uint8Array) {
    if (input.byteLength > limits.max_document_bytes) {
      throw new UtcpError(
        'RESPONSE_TOO_LARGE',
        `OpenAPI document is larger than the ${limits.max_document_bytes}-byte document limit`,
      );
    }
    doc = new TextDecoder('utf-8').decode(input);
  }
  if (typeof doc === 'string') {
    if (doc.length > limits.max_document_bytes / 4 && Buffer.byteLength(doc, 'utf8') > limits.max_document_bytes) {
      throw new UtcpError(
        'RESPONSE_TOO_LARGE',
        `OpenAPI document is larger than the ${limits.max_document_bytes}-byte document limit`,
      );
    }
    doc = await parseDocumentText(doc, { what: 'OpenAPI document', limits });
  }
  if (!isPlainObject(doc) || !('openapi' in doc || 'swagger' in doc || 'paths' in doc)) {
    throw new UtcpError(
      'INVALID_MANUAL',
      'Not an OpenAPI document: expected an object with "openapi", "swagger" or "paths"',
    );
  }
  return convertOpenApiSpec(doc, { ...options, manualName: options.manualName ?? defaultManualName(doc) });
}
