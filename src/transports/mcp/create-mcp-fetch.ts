import { createDeadline, type Deadline } from '../../core/deadline.js';
import { UtcpError } from '../../core/errors.js';
import type { TransportContext } from '../../core/transport.js';
import type { Auth } from '../../core/types.js';
import { resolveAuth } from '../../http/auth.js';
import { mediaType } from '../../http/http-body.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';
import { exchangeFetch } from '../../http/http-fetch.js';

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
  /** The server broke an input bound (a message over the size cap); the connection was dropped. */
  failure?: string;
}

/** Bounds on what one MCP HTTP connection reads (docs/design/transports.md#mcp-http-bounds). */
export interface McpFetchBounds {
  /** Largest JSON-RPC message accepted: a JSON body, or one SSE event (bytes between blank lines). */
  maxMessageBytes: number;
  /** Called once when a message passes the cap (the session drops the connection). */
  onViolation(): void;
  /** A remote-sourced manual's server: loopback is refused, by URL and by resolved address (docs/design/threat-model.md#dial-guard). */
  remoteSource?: boolean;
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
  bounds?: McpFetchBounds,
): McpFetch {
  // MCP HTTP requests never follow redirects (docs/design/security.md#redirects): the exchange refuses a 3xx.
  const { dispatcher, logger } = exchangeDefaults(ctx);
  const send = exchangeFetch({
    dispatcher,
    logger,
    context: 'MCP server URL',
    what: 'MCP HTTP request',
    redirect: 'refuse',
    remoteSource: bounds?.remoteSource === true,
  });
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const material = await resolveAuth(auth, ctx, init?.signal ?? fallbackSignal, bounds?.remoteSource === true);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(material.headers)) headers.set(name, value);
    for (const [name, value] of material.query) url.searchParams.append(name, value);
    if (material.cookies.length > 0) {
      const pairs = material.cookies.map(([name, value]) => `${name}=${value}`);
      const existing = headers.get('cookie');
      headers.set('cookie', [...(existing ? [existing] : []), ...pairs].join('; '));
    }
    // The SDK's own signal (its request timeout) does not follow the session: closing it ends every request too,
    // also one still connecting (docs/design/threat-model.md#close-during-connect); unlinked once the body is read.
    // Not the DELETE that ends the session, which is sent while closing.
    const closes = (init?.method ?? 'GET').toUpperCase() === 'DELETE';
    const link = closes ? undefined : createDeadline([init?.signal, fallbackSignal], undefined, 'MCP HTTP request');
    let response: Response;
    try {
      response = await send(url, { ...init, headers, ...(link ? { signal: link.signal } : {}) });
    } catch (error) {
      link?.dispose();
      if (state.ready && !init?.signal?.aborted) state.broken = true;
      throw error;
    }
    if (bounds && response.body) response = boundedResponse(response, bounds, state, link);
    else link?.dispose();
    if (state.ready) {
      if (response.status === 404 && (init?.method ?? 'GET').toUpperCase() === 'POST') state.expired = true;
      if (response.status === 401) state.unauthorized = true;
    }
    return response;
  };
}

/**
 * The response with its body read through the message cap: a JSON body may not exceed `maxMessageBytes`, and on an
 * event stream no event may (the bytes since the last blank line are counted, so a stream of any length with
 * small events passes). Past the cap the body is cancelled (the socket goes), the stream fails with
 * RESPONSE_TOO_LARGE, and `onViolation` runs: at most one cap's worth of a hostile message is ever held.
 */
function boundedResponse(
  response: Response,
  bounds: McpFetchBounds,
  state: HttpConnectionState,
  link: Deadline | undefined,
): Response {
  const events = mediaType(response.headers.get('content-type') ?? undefined) === 'text/event-stream';
  const limit = bounds.maxMessageBytes;
  const reader = response.body!.getReader();
  let size = 0;
  let lineStart = true;
  let afterCr = false;
  /** Counts `chunk` into the current message; false once a message passed the cap. */
  const fits = (chunk: Uint8Array): boolean => {
    if (!events) {
      size += chunk.byteLength;
      return size <= limit;
    }
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x0a && afterCr) {
        afterCr = false; // the LF of a CRLF
        continue;
      }
      afterCr = byte === 0x0d;
      if (byte === 0x0a || byte === 0x0d) {
        if (lineStart) size = 0; // a blank line ends the event
        lineStart = true;
        continue;
      }
      lineStart = false;
      if (++size > limit) return false;
    }
    return true;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          link?.dispose();
          return controller.close();
        }
        if (fits(value)) return controller.enqueue(value);
        const failure = `the server sent a ${events ? 'server-sent event' : 'JSON-RPC message'} larger than ${limit} bytes (limits.max_response_bytes)`;
        state.failure ??= failure;
        reader.cancel().catch(() => {});
        controller.error(new UtcpError('RESPONSE_TOO_LARGE', `MCP HTTP response refused: ${failure}`));
        bounds.onViolation();
        link?.dispose();
      } catch (error) {
        link?.dispose();
        controller.error(error);
      }
    },
    cancel(reason) {
      link?.dispose();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
