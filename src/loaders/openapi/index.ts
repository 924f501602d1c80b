import { UtcpError } from '../../core/errors.js';
import type { OpenApiConverterOptions } from '../../core/transport.js';

/** Converts an OpenAPI 2.0/3.x document into a UTCP manual plus a conversion report. */
export async function convertOpenApi(
  _document: Record<string, unknown>,
  _options: OpenApiConverterOptions,
): Promise<{ manual: unknown; warnings: string[] }> {
  throw new UtcpError('NOT_SUPPORTED', 'OpenAPI conversion is not available in this version of utcp-kit');
}
