/**
 * Parsing of manual and spec documents: UTF-8 BOM stripped, JSON first, then YAML 1.2
 * (core schema, alias expansions capped, duplicate keys: last wins), size checked before parsing.
 */
import { UtcpError } from './errors.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';

export interface ParseDocumentOptions {
  /** `json` or `yaml` forces one parser; `auto` tries JSON then YAML. @default "auto" */
  format?: 'json' | 'yaml' | 'auto';
  /** Names the document in errors, e.g. "manual file tools.yaml". */
  what?: string;
  limits?: Pick<Limits, 'max_document_bytes' | 'max_yaml_aliases'>;
}

/** Parses JSON or YAML text into a value. Throws `UtcpError('INVALID_MANUAL')` naming the document. */
export async function parseDocumentText(text: string, options: ParseDocumentOptions = {}): Promise<unknown> {
  const what = options.what ?? 'document';
  const limits = options.limits ?? DEFAULT_LIMITS;
  if (text.length > limits.max_document_bytes) {
    throw new UtcpError('RESPONSE_TOO_LARGE', `${what} is larger than the ${limits.max_document_bytes}-byte document limit`);
  }
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const format = options.format ?? 'auto';
  if (format !== 'yaml') {
    try {
      return JSON.parse(body);
    } catch (cause) {
      if (format === 'json') throw new UtcpError('INVALID_MANUAL', `${what} is not valid JSON: ${(cause as Error).message}`, { cause });
    }
  }
  const YAML = await import('yaml');
  try {
    const doc = YAML.parseDocument(body, { schema: 'core', uniqueKeys: false, merge: true, prettyErrors: false });
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS({ maxAliasCount: limits.max_yaml_aliases });
  } catch (cause) {
    const reason = (cause as Error).message?.split('\n')[0] ?? String(cause);
    throw new UtcpError('INVALID_MANUAL', `${what} is neither valid JSON nor valid YAML: ${reason}`, { cause });
  }
}

/** True when a parsed document is a UTCP manual: an object with a `tools` array. */
export function isUtcpManualDocument(doc: unknown): doc is { tools: unknown[] } {
  return typeof doc === 'object' && doc !== null && !Array.isArray(doc) && Array.isArray((doc as { tools?: unknown }).tools);
}

/** True when a parsed document is an OpenAPI/Swagger document (detected by key presence). */
export function isOpenApiDocument(doc: unknown): doc is Record<string, unknown> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  return 'openapi' in doc || 'swagger' in doc || 'paths' in doc;
}
