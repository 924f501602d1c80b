import { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici';
import type { TransportContext } from '../../core/transport.js';
import { isLoopbackLike } from '../../core/url-policy.js';

const KEEP_ALIVE_TIMEOUT_MS = 4_000;

/** Whether `HTTPS_PROXY`/`HTTP_PROXY` (either case) is set in this environment. */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

export interface RoutingDispatcherOptions {
  /** Where proxy variables are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Extra socket/TLS options for every connection (tests use `lookup` and `ca`). */
  connect?: Agent.Options['connect'];
}

/**
 * One keep-alive connection pool for a client. Loopback-like targets always connect directly;
 * other targets go through undici's `EnvHttpProxyAgent` (HTTPS_PROXY/HTTP_PROXY/NO_PROXY) when a proxy
 * variable is set. TLS uses Node's default trust store, which includes `NODE_EXTRA_CA_CERTS`.
 */
export class RoutingDispatcher extends Dispatcher {
  readonly #direct: Agent;
  readonly #proxy: EnvHttpProxyAgent | undefined;
  #closed = false;

  constructor(options: RoutingDispatcherOptions = {}) {
    super();
    const env = options.env ?? process.env;
    const agentOptions = { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, ...(options.connect ? { connect: options.connect } : {}) };
    this.#direct = new Agent(agentOptions);
    const tls = typeof options.connect === 'object' && options.connect !== null ? { requestTls: options.connect, proxyTls: options.connect } : {};
    this.#proxy = proxyConfigured(env)
      ? new EnvHttpProxyAgent({
          ...agentOptions,
          ...tls,
          httpProxy: env.http_proxy ?? env.HTTP_PROXY,
          httpsProxy: env.https_proxy ?? env.HTTPS_PROXY,
          noProxy: env.no_proxy ?? env.NO_PROXY,
        })
      : undefined;
  }

  /** True when non-loopback requests are sent through a proxy. */
  get proxied(): boolean {
    return this.#proxy !== undefined;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = options.origin === undefined ? undefined : String(options.origin);
    const direct = !this.#proxy || origin === undefined || isLoopbackLike(origin);
    return (direct ? this.#direct : this.#proxy!).dispatch(options, handler);
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
    await Promise.all([how(this.#direct), this.#proxy ? how(this.#proxy) : undefined]);
  }
}

/**
 * The client's shared HTTP dispatcher (created on first use, destroyed when the client closes).
 * Used by the http, sse and streamable_http transports and by OAuth2 token requests.
 */
export function httpDispatcher(ctx: TransportContext): RoutingDispatcher {
  return ctx.shared('http.dispatcher', () => new RoutingDispatcher(), (d) => d.destroy());
}
