import type { Logger } from '../core/logger.js';
import { destroyBody, type ResponseBody } from './http-body.js';
import { httpExchange, type DispatcherChoice } from './http-exchange.js';

/** A WHATWG `fetch` signature, as SDKs that accept a custom fetch expect it. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface ExchangeFetchOptions {
  dispatcher: DispatcherChoice;
  logger?: Logger;
  /** URL-policy context, e.g. "MCP server URL". */
  context: string;
  /** Names requests in messages, e.g. "MCP request to server x". */
  what: string;
  /** `refuse` (default): a 3xx is an error; `follow`: hops re-checked by the exchange rules. */
  redirect?: 'follow' | 'refuse';
  maxRedirects?: number;
  remoteSource?: boolean;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

async function bodyBytes(body: RequestInit['body']): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/**
 * A `fetch`-compatible function on top of `httpExchange` (stream mode), for libraries that take a
 * custom fetch (the MCP SDK): the same URL policy, redirect rules, dial guard, pool and abort handling
 * as every other request. The response body streams; `init.signal` cancels it.
 */
export function exchangeFetch(options: ExchangeFetchOptions): FetchFunction {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    const headers: Record<string, string> = {};
    new Headers(init?.headers ?? request?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const body = await bodyBytes(init?.body ?? (request?.body ? await request.arrayBuffer() : undefined));
    const response = await httpExchange(
      { url, method, headers, body },
      {
        mode: 'stream',
        dispatcher: options.dispatcher,
        logger: options.logger,
        signal: init?.signal ?? request?.signal ?? undefined,
        what: options.what,
        context: options.context,
        redirect: options.redirect ?? 'refuse',
        maxRedirects: options.maxRedirects,
        remoteSource: options.remoteSource,
      },
    );
    const out = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
    }
    const nullBody = NULL_BODY_STATUSES.has(response.status) || method === 'HEAD';
    if (nullBody) destroyBody(response.body);
    const stream = nullBody ? null : webStream(response.body);
    return new Response(stream, { status: response.status, statusText: response.statusText, headers: out });
  };
}

/** A pull-based web stream over a body (Node 20's `Readable.toWeb` can enqueue after close). */
function webStream(body: ResponseBody): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value instanceof Uint8Array ? value : new Uint8Array(value));
      } catch (error) {
        controller.error(error);
      }
    },
    cancel() {
      destroyBody(body);
    },
  });
}
