import { scopeController } from '../../core/deadline.js';
import { isIP } from 'node:net';
import { Agent, buildConnector, Dispatcher, EnvHttpProxyAgent } from 'undici';
import { UtcpError } from '../../core/errors.js';
import type { TransportContext } from '../../core/transport.js';
import { isLoopbackLike } from '../../core/url-policy.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from './dial-guard.js';
import { abortableConnector } from './pending-connects.js';

const KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Whether `HTTPS_PROXY`/`HTTP_PROXY` (either case) is set in this environment. */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

export interface RoutingDispatcherOptions {
  /** Where proxy variables are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Extra socket/TLS options for every connection (tests use `lookup` and `ca`). */
  connect?: buildConnector.BuildOptions;
  /** Resolver for direct connections. @default `connect.lookup`, else dns.lookup */
  lookup?: LookupFunction;
  /**
   * The dial guard: refuse every direct connection whose resolved address is loopback-like
   * (tools of a remote-sourced manual). Through a proxy, the target's name is resolved here first and
   * refused the same way before the request reaches the proxy; the proxy itself is never guarded.
   */
  remote?: boolean;
  /** Open connections per origin; more requests wait for a free one. @default unlimited */
  connections?: number;
}

/**
 * One keep-alive connection pool for a client. Loopback-like targets always connect directly;
 * other targets go through undici's `EnvHttpProxyAgent` (HTTPS_PROXY/HTTP_PROXY/NO_PROXY) when a proxy
 * variable is set. TLS uses Node's default trust store, which includes `NODE_EXTRA_CA_CERTS`.
 */
export class RoutingDispatcher extends Dispatcher {
  readonly #direct: Agent;
  readonly #proxy: EnvHttpProxyAgent | undefined;
  /** Set for a remote pool behind a proxy: resolves a target's name by the dial guard's rule before CONNECT. */
  readonly #proxyTargetCheck: LookupFunction | undefined;
  readonly #closing = scopeController();
  #closed = false;

  constructor(options: RoutingDispatcherOptions = {}) {
    super();
    const env = options.env ?? process.env;
    const connections =
      options.connections !== undefined && options.connections > 0 ? { connections: options.connections } : {};
    const agentOptions = {
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      ...connections,
      ...(options.connect ? { connect: options.connect } : {}),
    };
    // Direct connections resolve through the guarded lookup: pending lookups end when the pool closes,
    // and with `remote` a name resolving to loopback is refused (an IP literal is checked before dialling).
    const lookup = guardedLookup({
      remote: options.remote === true,
      lookup: options.lookup ?? (options.connect as { lookup?: LookupFunction } | undefined)?.lookup,
      closing: this.#closing.signal,
      what: 'HTTP connection',
    });
    const connector = abortableConnector(
      buildConnector({ ...(options.connect ?? {}), lookup } as buildConnector.BuildOptions),
      this.#closing.signal,
      'HTTP connection',
    );
    const remote = options.remote === true;
    const guardedConnect: buildConnector.connector = (connectOptions, callback) => {
      try {
        assertDialAllowed(connectOptions.hostname, remote, 'HTTP connection');
      } catch (error) {
        callback(error as Error, null);
        return;
      }
      connector(connectOptions, callback);
    };
    this.#direct = new Agent({ ...agentOptions, connect: guardedConnect });
    const tls =
      typeof options.connect === 'object' && options.connect !== null
        ? { requestTls: options.connect, proxyTls: options.connect }
        : {};
    this.#proxy = proxyConfigured(env)
      ? new EnvHttpProxyAgent({
          ...agentOptions,
          ...tls,
          httpProxy: env.http_proxy ?? env.HTTP_PROXY,
          httpsProxy: env.https_proxy ?? env.HTTPS_PROXY,
          noProxy: env.no_proxy ?? env.NO_PROXY,
        })
      : undefined;
    this.#proxyTargetCheck = this.#proxy && remote ? lookup : undefined;
  }

  /** True when non-loopback requests are sent through a proxy. */
  get proxied(): boolean {
    return this.#proxy !== undefined;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = options.origin === undefined ? undefined : String(options.origin);
    const direct = !this.#proxy || origin === undefined || isLoopbackLike(origin);
    if (direct) return this.#direct.dispatch(options, handler);
    if (!this.#proxyTargetCheck) return this.#proxy!.dispatch(options, handler);
    // The proxy resolves the name and connects; it must not be asked for a name that resolves to loopback
    // here (docs/design/threat-model.md#dial-guard). IP literals were refused above (loopback-like → direct pool).
    let host: string;
    try {
      host = new URL(origin!).hostname.replace(/^\[(.*)\]$/, '$1');
    } catch {
      return this.#proxy!.dispatch(options, handler);
    }
    if (isIP(host) !== 0) return this.#proxy!.dispatch(options, handler);
    this.#proxyTargetCheck(host, { all: true }, (error) => {
      // A loopback answer (or a closing pool) fails the request. A name this host cannot resolve at all is left to
      // the proxy, often the only resolver a proxied network has; our resolver then has no loopback answer to give.
      if (!error || !(error instanceof UtcpError || (error as NodeJS.ErrnoException).code === 'ECANCELLED')) {
        this.#proxy!.dispatch(options, handler);
        return;
      }
      failHandler(handler, error);
    });
    return true;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const done = this.#shutdown((d) => d.close());
    if (callback) {
      done.then(callback, callback);
      return;
    }
    return done;
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const done = this.#shutdown((d) => d.destroy(err));
    if (callback) {
      done.then(callback, callback);
      return;
    }
    return done;
  }

  async #shutdown(how: (d: Dispatcher) => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await Promise.all([how(this.#direct), this.#proxy ? how(this.#proxy) : undefined]);
  }
}

/** Delivers a dispatch failure to an undici handler of either API generation. */
function failHandler(handler: Dispatcher.DispatchHandler, error: Error): void {
  const h = handler as {
    onError?: (error: Error) => void;
    onResponseError?: (controller: unknown, error: Error) => void;
  };
  if (typeof h.onError === 'function') h.onError(error);
  else h.onResponseError?.(null, error);
}

/**
 * The client's HTTP dispatcher (created on first use, destroyed when the client closes), one per
 * provenance: `remote` (tools of a remote-sourced manual: the dial guard refuses loopback addresses)
 * or local. Both use the client's resolver (`lookup` option) and per-origin connection cap.
 */
export function httpDispatcher(ctx: TransportContext, remote = false): RoutingDispatcher {
  return ctx.shared(
    remote ? 'http.dispatcher.remote' : 'http.dispatcher',
    () => new RoutingDispatcher({ remote, lookup: ctx.lookup, connections: ctx.limits.max_connections_per_origin }),
    (d) => d.destroy(),
  );
}

/**
 * The client-wide part of `httpExchange` options: its two pools, `max_redirects` and logger (memoised per client).
 * Call sites list these fields rather than spreading this shared object into the options: the spread put the
 * options on a slow path that cost about 25 µs of CPU per tool call.
 */
export function exchangeDefaults(ctx: TransportContext): {
  dispatcher: (remote: boolean) => Dispatcher;
  maxRedirects: number;
  logger: TransportContext['logger'];
} {
  return ctx.shared('http.exchange-defaults', () => ({
    dispatcher: (remote: boolean) => httpDispatcher(ctx, remote),
    maxRedirects: ctx.limits.max_redirects,
    logger: ctx.logger,
  }));
}
