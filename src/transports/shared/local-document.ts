import { UtcpError } from '../../core/errors.js';
import { isOpenApiDocument, isUtcpManualDocument, parseDocumentText } from '../../core/document.js';
import type { DiscoveryResult, TransportContext } from '../../core/transport.js';
import type { OpenApiSourceTemplate } from './template-fields.js';

/**
 * Classifies a local document (text or file manual): a `tools` array is a UTCP manual,
 * an OpenAPI document goes to the converter. Local documents are not "remote": loopback servers are allowed.
 */
export async function discoverFromDocument(
  ctx: TransportContext,
  text: string,
  options: {
    what: string;
    manualName: string;
    rawTemplate: OpenApiSourceTemplate;
    format?: 'json' | 'yaml' | 'auto';
    specUrl?: string;
  },
): Promise<DiscoveryResult> {
  const doc = await parseDocumentText(text, { what: options.what, format: options.format, limits: ctx.limits });
  if (isUtcpManualDocument(doc)) return { manual: doc };
  if (isOpenApiDocument(doc)) {
    const raw = options.rawTemplate;
    const { manual, warnings } = await ctx.convertOpenApi(doc, {
      manualName: options.manualName,
      specUrl: options.specUrl,
      baseUrl: raw.base_url ?? null,
      authTools: raw.auth_tools ?? null,
      manualAuth: raw.auth ?? null,
      authMode: raw.openapi_auth ?? null,
      filter: raw.openapi_filter ?? null,
    });
    return { manual, warnings, openapi: true };
  }
  throw new UtcpError(
    'INVALID_MANUAL',
    `${options.what} is neither a UTCP manual (an object with a "tools" array) nor an OpenAPI document`,
  );
}
