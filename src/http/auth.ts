import { UtcpError } from '../core/errors.js';
import type { TransportContext } from '../core/transport.js';
import type { Auth, OAuth2Auth } from '../core/types.js';
import { assertHeaderSafe } from '../core/url-policy.js';
import { httpDispatcher } from './http-dispatcher.js';
import { OAuth2TokenCache } from './oauth2.js';

/** What an auth object adds to a request. Header names keep their configured case. */
export interface AuthMaterial {
  headers: Record<string, string>;
  /** Query parameters, appended after every other parameter. */
  query: Array<[string, string]>;
  cookies: Array<[string, string]>;
  /** Header names set by this auth object (stripped on cross-origin redirects). */
  authHeaderNames: string[];
}

/** The client's OAuth2 token cache (one per client, closed with it). */
export function oauth2Tokens(ctx: TransportContext): OAuth2TokenCache {
  return ctx.shared(
    'auth.oauth2',
    () => new OAuth2TokenCache((remote) => httpDispatcher(ctx, remote)),
    (cache) => cache.close(),
  );
}

const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Throws HEADER_INJECTION unless a cookie name is a token and its value has no CR/LF/NUL or `;`. */
export function assertCookieSafe(name: string, value: string): void {
  if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value)) {
    throw new UtcpError(
      'HEADER_INJECTION',
      `Cookie ${name.replace(/[\r\n\0].*$/s, '') || '(unnamed)'} contains CR/LF or NUL characters`,
    );
  }
  if (!COOKIE_NAME.test(name))
    throw new UtcpError('HEADER_INJECTION', `Cookie name ${JSON.stringify(name)} is not a valid token`);
  if (value.includes(';')) throw new UtcpError('HEADER_INJECTION', `Cookie ${name} has a value containing ";"`);
}

function emptyMaterial(): AuthMaterial {
  return { headers: {}, query: [], cookies: [], authHeaderNames: [] };
}

function withHeader(name: string, value: string): AuthMaterial {
  assertHeaderSafe(name, value);
  return { ...emptyMaterial(), headers: { [name]: value }, authHeaderNames: [name] };
}

/**
 * Turns an auth object into headers, query parameters and cookies (docs/design/manual-format.md#auth).
 * api_key (header/query/cookie), basic, oauth2 (client credentials, cached per client) and oauth2_user.
 * `remote`: the auth belongs to a tool of a remote-sourced manual, so an OAuth2 token request goes through the
 * dial guard (docs/design/threat-model.md#dial-guard).
 * @throws HEADER_INJECTION on CR/LF/NUL, INVALID_MANUAL on an empty key, URL_POLICY on a bad token URL.
 */
export async function resolveAuth(
  auth: Auth | null | undefined,
  ctx: TransportContext,
  signal: AbortSignal,
  remote = false,
): Promise<AuthMaterial> {
  if (auth === null || auth === undefined) return emptyMaterial();
  switch (auth.auth_type) {
    case 'api_key': {
      if (typeof auth.api_key !== 'string' || auth.api_key === '') {
        throw new UtcpError('INVALID_MANUAL', 'api_key auth has an empty api_key');
      }
      const name = auth.var_name ?? 'X-Api-Key';
      const location = auth.location ?? 'header';
      if (typeof name !== 'string' || name === '')
        throw new UtcpError('INVALID_MANUAL', 'api_key auth has an empty var_name');
      if (/[\r\n\0]/.test(name)) assertHeaderSafe(name, '');
      if (location === 'header') return withHeader(name, auth.api_key);
      if (location === 'query') {
        if (/[\r\n\0]/.test(auth.api_key)) assertHeaderSafe(name, auth.api_key);
        return { ...emptyMaterial(), query: [[name, auth.api_key]] };
      }
      if (location === 'cookie') {
        assertCookieSafe(name, auth.api_key);
        return { ...emptyMaterial(), cookies: [[name, auth.api_key]] };
      }
      throw new UtcpError('INVALID_MANUAL', `api_key auth has an unknown location "${String(location)}"`);
    }
    case 'basic': {
      if (typeof auth.username !== 'string' || typeof auth.password !== 'string') {
        throw new UtcpError('INVALID_MANUAL', 'basic auth needs a username and a password');
      }
      return withHeader(
        'Authorization',
        'Basic ' + Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64'),
      );
    }
    case 'oauth2': {
      const token = await oauth2Tokens(ctx).token(auth, signal, remote);
      return withHeader('Authorization', `Bearer ${token}`);
    }
    case 'oauth2_user': {
      if (typeof auth.access_token !== 'string' || auth.access_token === '') {
        throw new UtcpError('INVALID_MANUAL', 'oauth2_user auth has an empty access_token');
      }
      const prefix = typeof auth.prefix === 'string' ? auth.prefix : 'Bearer ';
      return withHeader(auth.var_name ?? 'Authorization', prefix + auth.access_token);
    }
    default:
      throw new UtcpError(
        'NOT_SUPPORTED',
        `Unsupported auth_type "${String((auth as { auth_type?: unknown }).auth_type)}"`,
      );
  }
}

/** Drops a cached OAuth2 token after a 401, so the next `resolveAuth` fetches a new one. Other kinds: no-op. */
export function invalidateAuth(auth: Auth | null | undefined, ctx: TransportContext): void {
  if (auth?.auth_type === 'oauth2') oauth2Tokens(ctx).invalidate(auth as OAuth2Auth);
}
