/**
 * The parts of undici the HTTP stack uses, loaded on their own (docs/design/http-exchange.md#undici-parts): undici's
 * package entry loads everything it ships (fetch, WebSocket, caches, mocks, interceptors), about 64 ms in a fresh
 * process on this machine, where the dispatchers, the connector and `request` take about 25 ms. The cold first HTTP
 * request of a process (a `utcp` run, a serverless worker) pays that difference.
 *
 * undici publishes no `exports` map, so its files can be required by path; if a later undici moves one, the whole
 * package is loaded instead (the same classes, only slower), and `test/http/undici-parts.test.ts` says so for the
 * version we install.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

type Parts = Pick<
  typeof Undici,
  'Agent' | 'buildConnector' | 'Client' | 'Dispatcher' | 'EnvHttpProxyAgent' | 'Pool'
> & {
  /** `undici.request` without the package entry's argument checks (our URLs are checked before they get here). */
  request: (
    url: URL,
    options: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
      method: Undici.Dispatcher.HttpMethod;
      dispatcher: Undici.Dispatcher;
    },
  ) => Promise<Undici.Dispatcher.ResponseData>;
  /** True when the parts were loaded by path, false when the whole package was loaded. */
  readonly byPath: boolean;
};

const require = createRequire(import.meta.url);

function byPath(): Parts {
  const apiRequest = require('undici/lib/api/api-request') as (
    this: Undici.Dispatcher,
    options: Undici.Dispatcher.RequestOptions,
  ) => Promise<Undici.Dispatcher.ResponseData>;
  if (typeof apiRequest !== 'function') throw new TypeError('undici/lib/api/api-request is not a function');
  const Dispatcher = require('undici/lib/dispatcher/dispatcher') as typeof Undici.Dispatcher;
  // What the package entry does on load: dispatchers get `request`, `connect`... (a proxy agent tunnels through
  // its pool's `connect`). The same functions, so loading the package later changes nothing.
  Object.assign(Dispatcher.prototype, require('undici/lib/api'));
  return {
    Agent: require('undici/lib/dispatcher/agent'),
    buildConnector: require('undici/lib/core/connect'),
    Client: require('undici/lib/dispatcher/client'),
    Dispatcher,
    EnvHttpProxyAgent: require('undici/lib/dispatcher/env-http-proxy-agent'),
    Pool: require('undici/lib/dispatcher/pool'),
    // What the package's `request(url, options)` does before calling this (index.js `makeDispatcher`).
    request: (url, { dispatcher, ...options }) =>
      apiRequest.call(dispatcher, {
        ...options,
        origin: url.origin,
        path: url.search ? `${url.pathname}${url.search}` : url.pathname,
        method: options.method,
      }),
    byPath: true,
  };
}

function whole(): Parts {
  const u = require('undici') as typeof Undici;
  return {
    Agent: u.Agent,
    buildConnector: u.buildConnector,
    Client: u.Client,
    Dispatcher: u.Dispatcher,
    EnvHttpProxyAgent: u.EnvHttpProxyAgent,
    Pool: u.Pool,
    request: (url, options) => u.request(url, options),
    byPath: false,
  };
}

function load(): Parts {
  try {
    const parts = byPath();
    for (const [name, value] of Object.entries(parts)) {
      if (name !== 'byPath' && typeof value !== 'function') throw new TypeError(`undici part ${name} is missing`);
    }
    return parts;
  } catch {
    return whole();
  }
}

export const undici: Parts = load();
