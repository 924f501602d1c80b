/**
 * The converter the client hands to transports (`ctx.convertOpenApi`): a parsed document in, the manual and the
 * warnings out. Not public: users convert with `convertOpenApiDocument` from `utcp-kit/loaders/openapi`.
 */
import type { OpenApiConverterOptions } from '../../core/transport.js';
import { convertOpenApiSpec } from './convert-open-api-spec.js';

/**
 * Converts a parsed OpenAPI document into a UTCP manual; `warnings` lists every skipped operation
 * and dropped construct. Throws `UrlPolicyError` for the remote→loopback rule and bad token URLs.
 */
export async function convertOpenApi(
  document: Record<string, unknown>,
  options: OpenApiConverterOptions,
): Promise<{ manual: unknown; warnings: string[] }> {
  const { manual, report } = convertOpenApiSpec(document, options);
  return { manual, warnings: report.warnings };
}
