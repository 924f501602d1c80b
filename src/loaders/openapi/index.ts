/**
 * `utcp-kit/loaders/openapi`: OpenAPI 2.0/3.0/3.1 → UTCP `http` tools (docs/design/openapi.md).
 * One entry, `convertOpenApiDocument`: text, bytes or a parsed object in; the manual and the full conversion
 * report out. (The client's own adapter is loaders/openapi/client-adapter.ts, not public.)
 */

export { convertOpenApiDocument, type ConvertOpenApiDocumentOptions } from './convert-open-api-document.js';
export type {
  OpenApiConversion,
  OpenApiHttpTemplate,
  OpenApiManual,
  OpenApiTool,
} from './convert-open-api-spec.js';
export type {
  OpenApiConversionReport,
  OpenApiDroppedConstruct,
  OpenApiOperationRef,
  OpenApiSkippedOperation,
} from './conversion-report.js';
