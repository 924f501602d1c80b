import type { TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { assertHeaderSafe, assertUrlAllowed } from '../../core/url-policy.js';
import { resolveAuth } from '../../http/auth.js';

/** The URL and headers of one WebSocket upgrade request. */
export interface HandshakeRequest {
  url: string;
  headers: Record<string, string>;
}

/**
 * Builds the upgrade request: URL policy first (context `WebSocket URL (connect)`), then static headers,
 * auth (api_key header → header, query → URL parameter, cookie → `Cookie`; basic; oauth2 → Bearer)
 * and per-call `header_fields` headers. Every header is checked for CR/LF/NUL.
 * @throws UrlPolicyError, UtcpError (HEADER_INJECTION), auth errors.
 */
export async function handshakeRequest(
  url: string,
  headers: Record<string, string>,
  auth: Auth | null | undefined,
  extraHeaders: Record<string, string>,
  ctx: TransportContext,
  signal: AbortSignal,
  remoteSource = false,
): Promise<HandshakeRequest> {
  const parsed = assertUrlAllowed(url, 'connect', 'ws');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    assertHeaderSafe(name, String(value));
    out[name] = String(value);
  }
  const material = await resolveAuth(auth ?? null, ctx, signal, remoteSource);
  Object.assign(out, material.headers);
  for (const [name, value] of material.query) parsed.searchParams.append(name, value);
  if (material.cookies.length > 0) {
    const cookieKey = Object.keys(out).find((k) => k.toLowerCase() === 'cookie');
    const parts = material.cookies.map(([k, v]) => `${k}=${v}`);
    if (cookieKey) {
      parts.unshift(out[cookieKey]);
      delete out[cookieKey];
    }
    out.Cookie = parts.join('; ');
  }
  for (const [name, value] of Object.entries(extraHeaders)) {
    assertHeaderSafe(name, value);
    out[name] = value;
  }
  return { url: parsed.toString(), headers: out };
}
