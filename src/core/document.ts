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

/**
 * Documents parsed here from JSON text, with the most objects and arrays they can hold (half the text's length: each
 * takes two characters at least). Such a document is a tree, no object in two places, so a walk over all of it needs
 * no set of visited objects (docs/design/performance.md#cold-openapi). The bound keeps that safe if code changed the
 * document afterwards: a walk that meets more containers than this is not over a tree any more.
 */
const jsonTrees = new WeakMap<object, number>();

/** How many objects and arrays `doc` holds at most, when parseDocumentText made it from JSON; else undefined. */
export function jsonTreeBound(doc: unknown): number | undefined {
  return typeof doc === 'object' && doc !== null ? jsonTrees.get(doc) : undefined;
}

/** Parses JSON or YAML text into a value. Throws `UtcpError('INVALID_MANUAL')` naming the document. */
export async function parseDocumentText(text: string, options: ParseDocumentOptions = {}): Promise<unknown> {
  const what = options.what ?? 'document';
  const limits = options.limits ?? DEFAULT_LIMITS;
  if (text.length > limits.max_document_bytes) {
    throw new UtcpError(
      'RESPONSE_TOO_LARGE',
      `${what} is larger than the ${limits.max_document_bytes}-byte document limit`,
    );
  }
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const format = options.format ?? 'auto';
  let jsonError: UtcpError | undefined;
  if (format !== 'yaml') {
    try {
      const value: unknown = JSON.parse(body);
      if (typeof value === 'object' && value !== null) jsonTrees.set(value, body.length >> 1);
      return value;
    } catch (cause) {
      jsonError = new UtcpError(
        'INVALID_MANUAL',
        `${what} is not valid JSON: ${describeJsonError(cause as Error, body)}`,
        { cause },
      );
      if (format === 'json') throw jsonError;
    }
  }
  // Text that opens like JSON was meant as JSON: if YAML cannot read it either, the JSON error is the useful one.
  const looksLikeJson = /^\s*[[{]/.test(body);
  const YAML = await import('yaml');
  try {
    const doc = YAML.parseDocument(body, { schema: 'core', uniqueKeys: false, merge: true, prettyErrors: false });
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS({ maxAliasCount: limits.max_yaml_aliases });
  } catch (cause) {
    if (looksLikeJson && jsonError) throw jsonError;
    const reason = (cause as Error).message?.split('\n')[0] ?? String(cause);
    throw new UtcpError(
      'INVALID_MANUAL',
      `${what} is ${format === 'yaml' ? 'not' : 'neither valid JSON nor'} valid YAML: ${reason}`,
      { cause },
    );
  }
}

/** JSON.parse's message with the position turned into a line and column, which editors can jump to. */
function describeJsonError(error: Error, text: string): string {
  // V8 quotes the text around the error, newlines included: keep it on one line and short.
  const flat = error.message.replace(/\s+/g, ' ').trim();
  const message = flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
  const at = /at position (\d+)/.exec(message);
  if (!at) return message;
  const position = Number(at[1]);
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `${message.replace(/\s*in JSON at position \d+.*$/, '')} at line ${line}, column ${column}`;
}

/** True when a parsed document is a UTCP manual: an object with a `tools` array. */
export function isUtcpManualDocument(doc: unknown): doc is { tools: unknown[] } {
  return (
    typeof doc === 'object' && doc !== null && !Array.isArray(doc) && Array.isArray((doc as { tools?: unknown }).tools)
  );
}

/** True when a parsed document is an OpenAPI/Swagger document (detected by key presence). */
export function isOpenApiDocument(doc: unknown): doc is Record<string, unknown> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  return 'openapi' in doc || 'swagger' in doc || 'paths' in doc;
}
