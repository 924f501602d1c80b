import { scopeController } from '../core/deadline.js';
import { isIP, type Socket } from 'node:net';
import type * as U from 'undici';
import { UtcpError } from '../core/errors.js';
import type { TransportContext } from '../core/transport.js';
import { isLoopbackLike } from '../core/url-policy.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from '../net/dial-guard.js';
import { abortableConnector } from './pending-connects.js';
import { undici } from './undici.js';

const { Agent, buildConnector, Client, Dispatcher, EnvHttpProxyAgent, Pool } = undici;

const KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Whether `HTTPS_PROXY`/`HTTP_PROXY` (either case) is set in this environment. */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

export interface RoutingDispatcherOptions {
  /** Where proxy variables are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Extra socket/TLS options for every connection (tests use `lookup` and `ca`). */
  connect?: U.buildConnector.BuildOptions;
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
  readonly #direct: U.Agent;
  readonly #proxy: U.EnvHttpProxyAgent | undefined;
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
      buildConnector({ ...(options.connect ?? {}), lookup } as U.buildConnector.BuildOptions),
      this.#closing.signal,
      'HTTP connection',
    );
    const remote = options.remote === true;
    const guardedConnect: U.buildConnector.connector = (connectOptions, callback) => {
      try {
        assertDialAllowed(connectOptions.hostname, remote, 'HTTP connection');
      } catch (error) {
        callback(error as Error, null);
        return;
      }
      connector(connectOptions, callback);
    };
    // Every pool any of the agents below creates (direct, NO_PROXY bypass, proxy tunnels) gets its sockets through
    // `resetFailsBody` (docs/design/threat-model.md#edges-and-nesting).
    const poolOptions = { ...agentOptions, factory: poolFactory };
    this.#direct = new Agent({ ...poolOptions, connect: guardedConnect });
    const tls =
      typeof options.connect === 'object' && options.connect !== null
        ? { requestTls: options.connect, proxyTls: options.connect }
        : {};
    // `connect` is what the EnvHttpProxyAgent's own direct agent (targets in NO_PROXY) dials with: the guarded
    // connector, like the direct pool, so a NO_PROXY target is resolved by the client's resolver and its address
    // checked (docs/design/threat-model.md#edges-and-nesting). Its proxy agents use their own tunnel connectors.
    // A remote pool's tunnels are opened to the address the guard checked, not to the name (PinnedTunnels).
    const tunnels = remote
      ? { clientFactory: (url: URL, opts: U.Pool.Options) => new PinnedTunnels(url, opts, lookup) }
      : {};
    this.#proxy = proxyConfigured(env)
      ? new EnvHttpProxyAgent({
          ...poolOptions,
          ...tls,
          ...tunnels,
          connect: guardedConnect,
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

  override dispatch(options: U.Dispatcher.DispatchOptions, handler: U.Dispatcher.DispatchHandler): boolean {
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

  async #shutdown(how: (d: U.Dispatcher) => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await Promise.all([how(this.#direct), this.#proxy ? how(this.#proxy) : undefined]);
  }
}

/**
 * The connection to the proxy of a remote pool (undici's ProxyAgent `clientFactory`): each CONNECT's target name is
 * resolved by the dial guard at that moment and the proxy is asked for the checked address (`CONNECT 192.0.2.7:443`),
 * so a name that rebinds to loopback after an earlier lookup cannot reach loopback through the proxy's own resolver
 * (docs/design/threat-model.md#edges-and-nesting). The Host header and the TLS name inside the tunnel stay the name.
 * A name this host cannot resolve at all is still sent by name: the proxy may be the only resolver there is.
 */
class PinnedTunnels extends Pool {
  readonly #lookup: LookupFunction;

  constructor(url: URL, options: U.Pool.Options, lookup: LookupFunction) {
    super(url, options);
    this.#lookup = lookup;
  }

  // undici declares a promise overload and a callback overload; this one serves both.
  override connect(options: U.Dispatcher.ConnectOptions, callback?: (...args: any[]) => void): any {
    const pinned = checkedTarget(this.#lookup, String(options.path)).then((path) => ({ ...options, path }));
    if (!callback) return pinned.then((o) => super.connect(o));
    pinned.then(
      (o) => super.connect(o, callback),
      (error: Error) => callback(error, null),
    );
  }
}

/** `host:port` with the host replaced by the address the guard checked; unchanged for IP literals and unknown names. */
function checkedTarget(lookup: LookupFunction, target: string): Promise<string> {
  const colon = target.lastIndexOf(':');
  const host = target.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  if (colon <= 0 || isIP(host) !== 0) return Promise.resolve(target);
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, addresses) => {
      if (error) {
        if (error instanceof UtcpError || error.code === 'ECANCELLED') reject(error);
        else resolve(target); // unresolvable here: the proxy's resolver decides (docs/design/threat-model.md#dial-guard)
        return;
      }
      const first = Array.isArray(addresses) ? addresses[0] : { address: addresses, family: isIP(addresses) };
      if (!first) return resolve(target);
      const address = first.family === 6 ? `[${first.address}]` : first.address;
      resolve(`${address}${target.slice(colon)}`);
    });
  });
}

/**
 * undici's pool factory (its default: a Client for one connection, else a Pool) with the connector wrapped by
 * `resetFailsBody`. Every agent of the dispatcher passes a connector function, never an options object.
 */
function poolFactory(origin: string | URL, options: U.Pool.Options): U.Dispatcher {
  const connect = typeof options.connect === 'function' ? resetFailsBody(options.connect) : options.connect;
  const opts = { ...options, connect };
  return options.connections === 1 ? new Client(origin, opts) : new Pool(origin, opts);
}

/**
 * A response delimited by the connection's close is complete only when the peer closed cleanly (RFC 9112 §8).
 * undici takes an ECONNRESET while such a body is being read for its end (a workaround for macOS) and returns the
 * short body as whole; this renames the reset, before undici's listener sees it, to `UND_ERR_SOCKET` (undici's
 * own "socket failed" code), so the request fails instead (docs/design/threat-model.md#edges-and-nesting).
 */
function resetFailsBody(connect: U.buildConnector.connector): U.buildConnector.connector {
  return (options, callback) =>
    connect(options, (error, socket) => {
      socket?.prependListener('error', renameReset);
      (callback as (error: Error | null, socket: Socket | null) => void)(error, socket);
    });
}

function renameReset(error: NodeJS.ErrnoException): void {
  if (error?.code === 'ECONNRESET') error.code = 'UND_ERR_SOCKET';
}

/** Delivers a dispatch failure to an undici handler of either API generation. */
function failHandler(handler: U.Dispatcher.DispatchHandler, error: Error): void {
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
  dispatcher: (remote: boolean) => U.Dispatcher;
  maxRedirects: number;
  logger: TransportContext['logger'];
} {
  return ctx.shared('http.exchange-defaults', () => ({
    dispatcher: (remote: boolean) => httpDispatcher(ctx, remote),
    maxRedirects: ctx.limits.max_redirects,
    logger: ctx.logger,
  }));
}
