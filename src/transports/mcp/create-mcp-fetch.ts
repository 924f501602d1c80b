import type { TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { resolveAuth } from '../shared/auth.js';
import { exchangeDefaults } from '../shared/http-dispatcher.js';
import { exchangeFetch } from '../shared/http-fetch.js';

/** What the fetch wrapper learned about one HTTP connection, read when a request fails. */
export interface HttpConnectionState {
  /** Set once the MCP session is initialised; failures before that are not "expired" or "broken". */
  ready: boolean;
  /** A POST got 404: the server forgot the session (docs/design/transports.md#mcp). */
  expired: boolean;
  /** A request failed below HTTP (reset, refused, broken pipe). */
  broken: boolean;
  /** A request got 401 (an OAuth2 token may have expired). */
  unauthorized: boolean;
}

export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export function newHttpConnectionState(): HttpConnectionState {
  return { ready: false, expired: false, broken: false, unauthorized: false };
}

/**
 * The fetch the SDK's HTTP transports use for one MCP connection: the client's shared connection
 * pool, the manual's auth resolved per request (so refreshed OAuth2 tokens are picked up), and
 * bookkeeping of session expiry and connection failures in `state`.
 */
export function createMcpFetch(
  ctx: TransportContext,
  auth: Auth | null | undefined,
  state: HttpConnectionState,
  fallbackSignal: AbortSignal,
): McpFetch {
  // MCP HTTP requests never follow redirects (docs/design/security.md#redirects): the exchange refuses a 3xx.
  const { dispatcher, logger } = exchangeDefaults(ctx);
  const send = exchangeFetch({
    dispatcher,
    logger,
    context: 'MCP server URL',
    what: 'MCP HTTP request',
    redirect: 'refuse',
  });
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const material = await resolveAuth(auth, ctx, init?.signal ?? fallbackSignal);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(material.headers)) headers.set(name, value);
    for (const [name, value] of material.query) url.searchParams.append(name, value);
    if (material.cookies.length > 0) {
      const pairs = material.cookies.map(([name, value]) => `${name}=${value}`);
      const existing = headers.get('cookie');
      headers.set('cookie', [...(existing ? [existing] : []), ...pairs].join('; '));
    }
    let response: Response;
    try {
      response = await send(url, { ...init, headers });
    } catch (error) {
      if (state.ready && !init?.signal?.aborted) state.broken = true;
      throw error;
    }
    if (state.ready) {
      if (response.status === 404 && (init?.method ?? 'GET').toUpperCase() === 'POST') state.expired = true;
      if (response.status === 401) state.unauthorized = true;
    }
    return response;
  };
}
