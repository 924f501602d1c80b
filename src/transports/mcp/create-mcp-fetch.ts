import { fetch as undiciFetch } from 'undici';
import { UtcpError } from '../../core/errors.js';
import type { TransportContext } from '../../core/transport.js';
import { redactUrl } from '../../core/url-policy.js';
import type { Auth } from '../../core/types.js';
import { resolveAuth } from '../shared/auth.js';
import { httpDispatcher } from '../shared/http-dispatcher.js';

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
export function createMcpFetch(ctx: TransportContext, auth: Auth | null | undefined, state: HttpConnectionState, fallbackSignal: AbortSignal): McpFetch {
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
      // MCP HTTP requests never follow redirects (docs/design/security.md#redirects): a 3xx is refused below.
      response = (await undiciFetch(url, { ...(init as object), headers, dispatcher: httpDispatcher(ctx), redirect: 'manual' } as unknown as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    } catch (error) {
      if (state.ready && !init?.signal?.aborted) state.broken = true;
      throw error;
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw new UtcpError('URL_POLICY', `MCP server URL: ${redactUrl(url)} answered HTTP ${response.status} (a redirect); MCP HTTP requests never follow redirects, configure the final URL instead`);
    }
    if (state.ready) {
      if (response.status === 404 && (init?.method ?? 'GET').toUpperCase() === 'POST') state.expired = true;
      if (response.status === 401) state.unauthorized = true;
    }
    return response;
  };
}
