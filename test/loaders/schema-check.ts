/**
 * Judges generated tool schemas by their strictest consumers: the JSON Schema draft 2020-12
 * meta-schema, and Ajv configured the way MCP hosts configure it (the MCP SDK's validator: strict
 * off, formats on through ajv-formats; checked with both the default and the 2020-12 Ajv classes).
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type AddFormats = (ajv: unknown) => unknown;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/** Keywords that exist only in OpenAPI: none may remain in a generated schema. */
const OPENAPI_ONLY = ['nullable', 'x-nullable', 'discriminator', 'example', 'xml', 'externalDocs'];
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples']);

export interface SchemaProblem {
  kind: 'meta-schema' | 'ajv' | 'openapi-keyword';
  message: string;
}

export interface SchemaChecker {
  /**
   * `compile: false` skips the (slow: Ajv spends about 0.2 ms of CPU per schema node) Ajv compilations;
   * `meta: false` skips the meta-schema check (for callers that check every schema object on its own).
   */
  check(schema: unknown, options?: { compile?: boolean; meta?: boolean }): SchemaProblem[];
}

/**
 * `hosts: 'sdk'` compiles with the MCP SDK's own validator set-up only (the default Ajv class), not also
 * with the 2020-12 class.
 */
export function createSchemaChecker(options: { hosts?: 'both' | 'sdk' } = {}): SchemaChecker {
  const meta = new Ajv2020({ strict: false, validateFormats: false, logger: false });
  const validateMeta = meta.getSchema('https://json-schema.org/draft/2020-12/schema');
  if (!validateMeta) throw new Error('Ajv2020 has no 2020-12 meta-schema');
  const hosts = [
    new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, logger: false }),
    new Ajv2020({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, logger: false }),
  ];
  if (options.hosts === 'sdk') hosts.pop();
  for (const h of hosts) addFormats(h);

  return {
    check(schema, checkOptions = {}) {
      const problems: SchemaProblem[] = [];
      if (checkOptions.meta !== false && !validateMeta(schema)) {
        const e = validateMeta.errors?.[0];
        problems.push({ kind: 'meta-schema', message: `${e?.instancePath} ${e?.message}` });
      }
      for (const h of checkOptions.compile === false ? [] : hosts) {
        try {
          h.compile(schema as object);
        } catch (err) {
          problems.push({ kind: 'ajv', message: (err as Error).message.slice(0, 200) });
        } finally {
          h.removeSchema(schema as object);
        }
      }
      for (const at of findOpenApiKeywords(schema)) problems.push({ kind: 'openapi-keyword', message: at });
      return problems;
    },
  };
}

/** Paths of OpenAPI-only keywords in schema positions (property names and data values are not keywords). */
export function findOpenApiKeywords(schema: unknown): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const walk = (node: unknown, at: string, inNames: boolean): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, `${at}/${i}`, false));
      return;
    }
    for (const [k, v] of Object.entries(node)) {
      if (inNames) {
        walk(v, `${at}/${k}`, false);
        continue;
      }
      if (OPENAPI_ONLY.includes(k) || k.startsWith('x-')) found.push(`${at}/${k}`);
      if (DATA_KEYS.has(k)) continue;
      walk(
        v,
        `${at}/${k}`,
        k === 'properties' ||
          k === 'patternProperties' ||
          k === '$defs' ||
          k === 'definitions' ||
          k === 'dependentSchemas',
      );
    }
  };
  walk(schema, '#', false);
  return found;
}
