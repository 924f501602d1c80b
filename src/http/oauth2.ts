import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { HttpStatusError, TransportError, UrlPolicyError, UtcpError } from '../core/errors.js';
import { createDeadline, raceSignal, scopeController } from '../core/deadline.js';
import type { OAuth2Auth } from '../core/types.js';
import { assertUrlAllowed, isLoopbackLike, redactUrl } from '../core/url-policy.js';
import { headerValue, mediaType, utf8 } from './http-body.js';
import { httpExchange } from './http-exchange.js';

/** Token responses larger than this are refused (docs/design/security.md#oauth2). */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** A cached token is reused until this long before it expires. */
export const TOKEN_EXPIRY_MARGIN_MS = 30_000;
/** `expires_in` when the token response has none, in seconds. */
export const DEFAULT_EXPIRES_IN_S = 3600;
/** Deadline for one token request, in ms. */
export const TOKEN_REQUEST_TIMEOUT_MS = 30_000;

interface TokenEntry {
  accessToken?: string;
  expiresAtMs: number;
  refreshToken?: string;
  /** True when `refreshToken` came from a token response (a failed refresh then falls back to client credentials). */
  refreshFromResponse: boolean;
  /** The endpoint refused body credentials and accepted HTTP Basic. */
  useBasic: boolean;
}

/** One token request: its deadline, and whether it runs for a remote-sourced manual (dial guard on). */
interface RequestHow {
  signal: AbortSignal;
  remote: boolean;
}

interface TokenResult {
  accessToken: string;
  expiresInS: number;
  refreshToken?: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Cache key: token URL, client id, SHA-256 of the secret, scope and SHA-256 of the configured refresh token. */
export function oauth2CacheKey(auth: OAuth2Auth): string {
  return JSON.stringify([
    auth.token_url,
    auth.client_id,
    sha256(String(auth.client_secret ?? '')),
    auth.scope ?? null,
    auth.refresh_token ? sha256(auth.refresh_token) : '',
  ]);
}

/** A token endpoint refused the request with this status; `fallback` says whether 400/401 rules apply. */
class TokenStatusError extends TransportError {
  constructor(
    readonly status: number,
    tokenUrl: string,
    statusText: string,
    oauthError: string | undefined,
  ) {
    const shown = redactUrl(tokenUrl);
    super(`OAuth2 token request to ${shown} failed: HTTP ${status}${oauthError ? ` (${oauthError})` : ''}`, {
      code: 'HTTP_STATUS',
      cause: new HttpStatusError(status, shown, oauthError ?? '', statusText),
    });
  }
}

/**
 * OAuth2 client-credentials tokens for one client (docs/design/manual-format.md#oauth2): URL policy before any
 * credential leaves, no redirects, body credentials then Basic on 400/401, refresh grant, expiry,
 * one in-flight request per cache key. Nothing is shared with another client.
 */
export class OAuth2TokenCache {
  readonly #entries = new Map<string, TokenEntry>();
  readonly #inflight = new Map<string, Promise<string>>();
  readonly #closing = scopeController();
  /** The client's pool for a provenance: `remote` refuses loopback addresses after resolution. */
  readonly #dispatcher: (remote: boolean) => Dispatcher;
  readonly #now: () => number;

  constructor(dispatcher: (remote: boolean) => Dispatcher, now: () => number = Date.now) {
    this.#dispatcher = dispatcher;
    this.#now = now;
  }

  /**
   * A valid access token for `auth`, from the cache or a token request. `remote`: the auth comes with a tool of a
   * remote-sourced manual, so the token URL may not be loopback, neither as written nor once resolved
   * (docs/design/threat-model.md#dial-guard).
   */
  async token(auth: OAuth2Auth, signal: AbortSignal, remote = false): Promise<string> {
    const url = assertUrlAllowed(auth.token_url, 'OAuth2 token URL');
    if (remote && isLoopbackLike(url.href))
      throw new UrlPolicyError(
        `OAuth2 token URL ${redactUrl(auth.token_url)} is loopback; a tool from a remote manual may not reach loopback`,
      );
    for (const field of ['client_id', 'client_secret'] as const) {
      if (typeof auth[field] !== 'string' || auth[field] === '') {
        throw new UtcpError('INVALID_MANUAL', `OAuth2 auth needs a non-empty ${field}`);
      }
    }
    if (this.#closing.signal.aborted) throw new UtcpError('CLIENT_CLOSED', 'The OAuth2 token cache is closed');
    // Remote and local requests for the same token never share a request (each goes through its own pool).
    const key = oauth2CacheKey(auth);
    const flightKey = `${remote ? 'remote' : 'local'}|${key}`;
    const entry = this.#entries.get(key);
    if (entry?.accessToken && this.#now() < entry.expiresAtMs - TOKEN_EXPIRY_MARGIN_MS) return entry.accessToken;
    let pending = this.#inflight.get(flightKey);
    if (!pending) {
      pending = this.#fetch(key, auth, remote).finally(() => this.#inflight.delete(flightKey));
      pending.catch(() => {});
      this.#inflight.set(flightKey, pending);
    }
    return raceSignal(pending, signal, 'OAuth2 token request');
  }

  /** Drops the cached access token (after a 401); a known refresh token is kept. */
  invalidate(auth: OAuth2Auth): void {
    const entry = this.#entries.get(oauth2CacheKey(auth));
    if (entry) {
      entry.accessToken = undefined;
      entry.expiresAtMs = 0;
    }
  }

  /** Aborts pending token requests and forgets every token. */
  close(): void {
    this.#closing.abort(new UtcpError('CLIENT_CLOSED', 'The client was closed'));
    this.#entries.clear();
  }

  async #fetch(key: string, auth: OAuth2Auth, remote: boolean): Promise<string> {
    const entry: TokenEntry = this.#entries.get(key) ?? {
      expiresAtMs: 0,
      refreshToken: auth.refresh_token ?? undefined,
      refreshFromResponse: false,
      useBasic: false,
    };
    const deadline = createDeadline(this.#closing.signal, TOKEN_REQUEST_TIMEOUT_MS, 'OAuth2 token request');
    try {
      return await this.#obtain(key, auth, entry, { signal: deadline.signal, remote });
    } finally {
      deadline.dispose();
    }
  }

  async #obtain(key: string, auth: OAuth2Auth, entry: TokenEntry, how: RequestHow): Promise<string> {
    let result: TokenResult | undefined;
    if (entry.refreshToken) {
      try {
        result = await this.#refresh(auth, entry, how);
      } catch (error) {
        const refusable = error instanceof TokenStatusError && (error.status === 400 || error.status === 401);
        if (!refusable || !entry.refreshFromResponse) throw error;
        entry.refreshToken = undefined;
      }
    }
    result ??= await this.#clientCredentials(auth, entry, how);
    entry.accessToken = result.accessToken;
    entry.expiresAtMs = this.#now() + result.expiresInS * 1000;
    if (result.refreshToken) {
      entry.refreshToken = result.refreshToken;
      entry.refreshFromResponse = true;
    }
    if (!this.#closing.signal.aborted) this.#entries.set(key, entry);
    return result.accessToken;
  }

  async #refresh(auth: OAuth2Auth, entry: TokenEntry, how: RequestHow): Promise<TokenResult> {
    const form: Record<string, string> = {
      grant_type: 'refresh_token',
      refresh_token: entry.refreshToken!,
      client_id: auth.client_id,
      client_secret: auth.client_secret,
    };
    if (auth.scope != null) form.scope = auth.scope;
    return this.#post(auth.token_url, form, undefined, how);
  }

  async #clientCredentials(auth: OAuth2Auth, entry: TokenEntry, how: RequestHow): Promise<TokenResult> {
    const scope: Record<string, string> = auth.scope != null ? { scope: auth.scope } : {};
    const basic = 'Basic ' + Buffer.from(`${auth.client_id}:${auth.client_secret}`, 'utf8').toString('base64');
    const viaBasic = () => this.#post(auth.token_url, { grant_type: 'client_credentials', ...scope }, basic, how);
    if (entry.useBasic) return viaBasic();
    try {
      return await this.#post(
        auth.token_url,
        { grant_type: 'client_credentials', client_id: auth.client_id, client_secret: auth.client_secret, ...scope },
        undefined,
        how,
      );
    } catch (error) {
      if (!(error instanceof TokenStatusError) || (error.status !== 400 && error.status !== 401)) throw error;
      const result = await viaBasic();
      entry.useBasic = true;
      return result;
    }
  }

  async #post(
    tokenUrl: string,
    form: Record<string, string>,
    authorization: string | undefined,
    how: RequestHow,
  ): Promise<TokenResult> {
    const shown = redactUrl(tokenUrl);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (authorization) headers.authorization = authorization;
    // Token requests never follow redirects and carry a small size cap (docs/design/security.md#redirects).
    const response = await httpExchange(
      { url: tokenUrl, method: 'POST', headers, body: new URLSearchParams(form).toString() },
      {
        dispatcher: this.#dispatcher(how.remote),
        signal: how.signal,
        remoteSource: how.remote,
        callerTimeoutMs: TOKEN_REQUEST_TIMEOUT_MS,
        what: `OAuth2 token request to ${shown}`,
        context: 'OAuth2 token URL',
        redirect: 'refuse',
        maxBytes: MAX_TOKEN_RESPONSE_BYTES,
        errorBodyBytes: MAX_TOKEN_RESPONSE_BYTES,
      },
    );
    const { status: statusCode, headers: responseHeaders, bytes } = response;
    const parsed = parseTokenBody(utf8(bytes), headerValue(responseHeaders, 'content-type'));
    if (statusCode < 200 || statusCode >= 300) {
      throw new TokenStatusError(statusCode, tokenUrl, '', safeOAuthError(parsed?.error));
    }
    const accessToken = parsed?.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new TransportError(`OAuth2 token response from ${shown} has no access_token`, { code: 'PROTOCOL_ERROR' });
    }
    const expires = Number(parsed?.expires_in);
    const refreshToken = parsed?.refresh_token;
    return {
      accessToken,
      expiresInS:
        parsed?.expires_in !== undefined && parsed?.expires_in !== null && Number.isFinite(expires)
          ? expires
          : DEFAULT_EXPIRES_IN_S,
      refreshToken: typeof refreshToken === 'string' && refreshToken !== '' ? refreshToken : undefined,
    };
  }
}

function parseTokenBody(text: string, contentType: string | undefined): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    if (mediaType(contentType) === 'application/x-www-form-urlencoded')
      return Object.fromEntries(new URLSearchParams(text));
    return undefined;
  }
}

/** The OAuth `error` code when it looks like one (never free text that could echo a credential). */
function safeOAuthError(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}
