/** Shared helpers for the OpenAPI converter tests. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { convertOpenApiDocument, type OpenApiConversion, type OpenApiTool } from '../../src/loaders/openapi/index.js';
import type { OpenApiConverterOptions } from '../../src/core/transport.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/openapi/', import.meta.url));

export function fixtureText(name: string): string {
  return readFileSync(FIXTURES + name, 'utf8');
}

/** Converts a fixture file (JSON or YAML text). */
export function convertFixture(
  name: string,
  options: Partial<OpenApiConverterOptions> = {},
): Promise<OpenApiConversion> {
  return convertOpenApiDocument(fixtureText(name), { manualName: 'demo', ...options });
}

/** Converts an inline document object. */
export function convert(
  doc: Record<string, unknown>,
  options: Partial<OpenApiConverterOptions> = {},
): Promise<OpenApiConversion> {
  return convertOpenApiDocument(doc, { manualName: 'demo', ...options });
}

export function toolNamed(result: OpenApiConversion, name: string): OpenApiTool {
  const tool = result.manual.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}; have ${result.manual.tools.map((t) => t.name).join(', ')}`);
  return tool;
}

/** A minimal OAS 3.0 document with the given paths (and extra root keys). */
export function oas3(paths: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'T', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths,
    ...extra,
  };
}

/** `{ get: { operationId, responses } }` shorthand. */
export function op(operationId?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...(operationId ? { operationId } : {}), responses: { '200': { description: 'ok' } }, ...extra };
}
