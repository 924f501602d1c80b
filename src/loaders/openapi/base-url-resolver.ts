/** Base URL of an operation (docs/design/openapi.md#base-url-variable, docs/design/openapi.md#base-url): servers, server variables, relative servers, Swagger 2.0 host. */
import { own } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';

/**
 * `relative` is set when the server URL was relative with nothing to resolve it against: the URL then starts
 * with the base-URL variable reference (docs/design/openapi.md#base-url-variable).
 */
export type BaseUrlResult =
  | { url: string; reason?: undefined; relative?: string }
  | { url?: undefined; reason: string; relative?: undefined };

/** The variable a relative server URL is bound to when the spec has no http(s) URL (namespaced like any variable). */
export const BASE_URL_VARIABLE = 'BASE_URL';

export interface BaseUrlContext {
  swagger2: boolean;
  doc: Record<string, unknown>;
  /** The spec URL when it is http(s); relative servers resolve against it. */
  httpSpecUrl?: URL;
}

/** Joins a base URL and an operation path: base without trailing `/` + `/` + path without leading `/`. */
export function joinUrl(base: string, path: string): string {
  const q = base.search(/[?#]/);
  const head = q >= 0 ? base.slice(0, q) : base;
  const tail = q >= 0 ? base.slice(q).replace(/#.*$/, '') : '';
  return `${head.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}${tail}`;
}

/** Normalises an absolute http(s) URL; anything else yields a reason. */
function finalise(raw: string, httpSpecUrl: URL | undefined, what: string): BaseUrlResult {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    if (!httpSpecUrl) return bindToVariable(raw, what);
    try {
      url = new URL(raw, httpSpecUrl);
    } catch {
      return { reason: `invalid ${what} ${JSON.stringify(raw)}` };
    }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { reason: `${what} ${JSON.stringify(raw)} does not use http(s)` };
  }
  if (!url.hostname) return { reason: `${what} ${JSON.stringify(raw)} has no host` };
  return { url: `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}` };
}

/** A relative server URL with no spec URL: `${BASE_URL}` + the server's path (made absolute). */
function bindToVariable(raw: string, what: string): BaseUrlResult {
  const trimmed = raw.trim();
  // Scheme-relative (`//api.example.com/v1`): the host is known; https, as for token URLs.
  if (trimmed.startsWith('//')) return finalise(`https:${trimmed}`, undefined, what);
  let path = trimmed.replace(/^\.\//, '').replace(/[?#].*$/, '');
  if (!path.startsWith('/')) path = `/${path}`;
  path = path.replace(/\/+$/, '');
  return { url: `\${${BASE_URL_VARIABLE}}${path}`, relative: trimmed };
}

/** First server of a `servers` list with its variables substituted, or undefined when the list is empty. */
function fromServers(servers: unknown, ctx: BaseUrlContext): BaseUrlResult | undefined {
  if (!Array.isArray(servers) || servers.length === 0) return undefined;
  const server = servers[0];
  if (!isPlainObject(server) || typeof server.url !== 'string') return { reason: 'server entry has no url' };
  const variables = server.variables;
  let missing: string | undefined;
  const raw = server.url.replace(/\{([^}]*)\}/g, (_m, name: string) => {
    const v = own(variables, name);
    const def = own(v, 'default');
    if (typeof def === 'string' || typeof def === 'number' || typeof def === 'boolean') return String(def);
    const choices = own(v, 'enum');
    if (Array.isArray(choices) && choices.length > 0 && choices[0] !== null && typeof choices[0] !== 'object')
      return String(choices[0]);
    missing ??= name;
    return '';
  });
  if (missing !== undefined) return { reason: `server variable {${missing}} has no default or enum value` };
  return finalise(raw, ctx.httpSpecUrl, 'server URL');
}

/** The Swagger 2.0 base URL from `schemes`, `host` and `basePath`, falling back to the spec URL. */
function fromSwagger2(ctx: BaseUrlContext): BaseUrlResult {
  const { doc, httpSpecUrl } = ctx;
  const schemes = Array.isArray(doc.schemes)
    ? doc.schemes.filter((s): s is string => typeof s === 'string').map((s) => s.toLowerCase())
    : [];
  const scheme = schemes.includes('https')
    ? 'https'
    : (schemes[0] ?? (httpSpecUrl ? httpSpecUrl.protocol.slice(0, -1) : 'https'));
  let host = typeof doc.host === 'string' && doc.host.trim() !== '' ? doc.host.trim() : undefined;
  // Some specs put a whole URL in `host`.
  if (host && /^[a-z][a-z0-9+.-]*:\/\//i.test(host)) {
    try {
      host = new URL(host).host;
    } catch {
      return { reason: `invalid host ${JSON.stringify(doc.host)}` };
    }
  }
  host ??= httpSpecUrl?.host;
  let basePath = typeof doc.basePath === 'string' ? doc.basePath : '/';
  if (!basePath.startsWith('/')) basePath = `/${basePath}`;
  if (!host) return bindToVariable(basePath, 'Swagger 2.0 basePath (no host)');
  return finalise(`${scheme}://${host}${basePath}`, undefined, 'Swagger 2.0 host/basePath');
}

/** Resolves base URLs, memoised per `servers` list (most operations share the root one). */
export class BaseUrlResolver {
  readonly #ctx: BaseUrlContext;
  readonly #memo = new WeakMap<object, BaseUrlResult>();
  #root: BaseUrlResult | undefined;

  constructor(ctx: BaseUrlContext) {
    this.#ctx = ctx;
  }

  resolve(pathItem: Record<string, unknown>, operation: Record<string, unknown>): BaseUrlResult {
    if (this.#ctx.swagger2) return (this.#root ??= fromSwagger2(this.#ctx));
    for (const servers of [operation.servers, pathItem.servers]) {
      if (Array.isArray(servers) && servers.length > 0) {
        let hit = this.#memo.get(servers);
        if (!hit) {
          hit = fromServers(servers, this.#ctx)!;
          this.#memo.set(servers, hit);
        }
        return hit;
      }
    }
    return (this.#root ??=
      fromServers(this.#ctx.doc.servers, this.#ctx) ?? finalise('/', this.#ctx.httpSpecUrl, 'default server URL "/"'));
  }
}
