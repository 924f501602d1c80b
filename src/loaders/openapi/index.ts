/**
 * OpenAPI 2.0/3.0/3.1 → UTCP `http` tools (docs/design/openapi.md).
 * `convertOpenApi` is what transports call through `ctx.convertOpenApi`; `convertOpenApiDocument`
 * is the user-facing entry that also parses text and returns the full conversion report.
 */
import type { OpenApiConverterOptions } from '../../core/transport.js';
import { convertOpenApiSpec } from './convert-open-api-spec.js';

export { convertOpenApiDocument, type ConvertOpenApiDocumentOptions } from './convert-open-api-document.js';
export {
  convertOpenApiSpec,
  type OpenApiConversion,
  type OpenApiHttpTemplate,
  type OpenApiManual,
  type OpenApiTool,
} from './convert-open-api-spec.js';
export type {
  OpenApiConversionReport,
  OpenApiDroppedConstruct,
  OpenApiOperationRef,
  OpenApiSkippedOperation,
} from './conversion-report.js';

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
