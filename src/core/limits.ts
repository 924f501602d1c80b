/** Size and count limits (docs/design/security.md#limits), overridable through the config's `limits`. */
import type { ValidationIssue } from './errors.js';

export interface Limits {
  /** Tool response size, in bytes. @default 10 MiB */
  max_response_bytes: number;
  /** Discovery document size, in bytes. @default 64 MiB */
  max_document_bytes: number;
  /** One stream item (SSE event, NDJSON line, WebSocket message), in bytes. @default 10 MiB */
  max_stream_item_bytes: number;
  /**
   * A stream (SSE) that delivers no event for this long fails with a timeout, in ms; heartbeats do not count
   * (docs/design/threat-model.md#stream-idle). @default 60000
   */
  stream_idle_timeout_ms: number;
  /** @default 5 */
  max_redirects: number;
  /** @default 100 */
  max_yaml_aliases: number;
  /** OpenAPI inlined schema nodes per schema. @default 10000 */
  max_schema_nodes: number;
  /** MCP `tools/list` pages. @default 100 */
  max_list_pages: number;
  /** OpenAPI: schema objects translated per document, all tools together (work bound). @default 4000000 */
  max_openapi_schema_work: number;
  /**
   * OpenAPI: schema nodes in all tools of one document together, shared subtrees counted at every use
   * (the serialised size), at most this many times the document's own node count. @default 256
   */
  max_openapi_expansion_factor: number;
  /** OpenAPI: the output allowance of any document, whatever its size. @default 4000000 */
  max_openapi_output_nodes: number;
  /** Open HTTP connections per origin and per client; further requests queue for a free one. @default 64 */
  max_connections_per_origin: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  max_response_bytes: 10 * 1024 * 1024,
  max_document_bytes: 64 * 1024 * 1024,
  max_stream_item_bytes: 10 * 1024 * 1024,
  stream_idle_timeout_ms: 60_000,
  max_redirects: 5,
  max_yaml_aliases: 100,
  max_schema_nodes: 10_000,
  max_list_pages: 100,
  max_openapi_schema_work: 4_000_000,
  max_openapi_expansion_factor: 256,
  max_openapi_output_nodes: 4_000_000,
  max_connections_per_origin: 64,
});

/** Limits for which 0 is meaningful: `max_redirects: 0` never follows a redirect, `max_yaml_aliases: 0` allows no alias. */
const ZERO_ALLOWED: ReadonlySet<string> = new Set(['max_redirects', 'max_yaml_aliases']);

function smallest(key: string): number {
  return ZERO_ALLOWED.has(key) ? 0 : 1;
}

/** The problems of a config's `limits`: unknown keys, and values that are not integers in range. */
export function validateLimits(value: unknown): ValidationIssue[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return [{ path: 'limits', message: 'expected an object' }];
  const issues: ValidationIssue[] = [];
  for (const [key, v] of Object.entries(value)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) {
      issues.push({
        path: `limits.${key}`,
        message: `unknown limit; expected one of ${Object.keys(DEFAULT_LIMITS).join(', ')}`,
      });
    } else if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < smallest(key)) {
      issues.push({
        path: `limits.${key}`,
        message: `expected an integer ≥ ${smallest(key)}, got ${JSON.stringify(v)}`,
      });
    }
  }
  return issues;
}

/** The defaults with the valid values of `partial` applied (config limits are checked by `validateLimits` first). */
export function resolveLimits(partial: Partial<Limits> | undefined): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  if (partial) {
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
      const v = partial[key];
      if (typeof v === 'number' && Number.isFinite(v) && v >= smallest(key)) out[key] = v;
    }
  }
  return out;
}
