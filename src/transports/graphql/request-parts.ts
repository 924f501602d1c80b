import { UtcpError } from '../../core/errors.js';
import { argToText } from '../../core/stringify.js';
import type { TransportContext } from '../../core/transport.js';
import type { JsonObject } from '../../core/types.js';
import type { GraphqlCallTemplate } from './template.js';
import { assertHeaderSafe } from '../../core/url-policy.js';
import { resolveAuth } from '../../http/auth.js';

export interface RequestParts {
  url: URL;
  headers: Record<string, string>;
  /** Arguments minus `header_fields`. */
  variables: JsonObject;
}

/**
 * Assembles URL, headers and variables for one GraphQL request: static headers, `header_fields`
 * arguments, then auth (api_key header/query/cookie, basic, oauth2). `url` has passed the URL policy.
 * @throws UtcpError HEADER_INJECTION for CR/LF/NUL in any header name or value.
 */
export async function buildRequestParts(
  url: URL,
  template: GraphqlCallTemplate,
  args: JsonObject,
  ctx: TransportContext,
  signal: AbortSignal,
  remoteSource = false,
): Promise<RequestParts> {
  const headers: Record<string, string> = {};
  const set = (name: string, value: string) => {
    assertHeaderSafe(name, value);
    headers[name.toLowerCase()] = value;
  };
  for (const [name, value] of Object.entries(template.headers ?? {})) {
    if (typeof value !== 'string') throw new UtcpError('INVALID_MANUAL', `GraphQL header ${name} must be a string`);
    set(name, value);
  }
  const headerFields = new Set(template.header_fields ?? []);
  const variables: JsonObject = {};
  for (const [name, value] of Object.entries(args)) {
    if (!headerFields.has(name)) {
      variables[name] = value;
      continue;
    }
    const text = argToText(value);
    if (text !== undefined) set(name, text);
  }
  const target = new URL(url);
  const auth = await resolveAuth(template.auth, ctx, signal, remoteSource);
  for (const [name, value] of Object.entries(auth.headers)) set(name, value);
  for (const [name, value] of auth.query) target.searchParams.append(name, value);
  if (auth.cookies.length > 0) {
    const cookie = auth.cookies.map(([k, v]) => `${k}=${v}`).join('; ');
    set('cookie', headers.cookie ? `${headers.cookie}; ${cookie}` : cookie);
  }
  return { url: target, headers, variables };
}
