/** Security schemes and requirements → tool `auth` (docs/design/openapi.md#security-schemes, docs/design/security.md#url-policy, docs/design/security.md#remote-loopback). */
import { UrlPolicyError } from '../../core/errors.js';
import { assertUrlAllowed, redactUrl, violatesRemoteLoopback } from '../../core/url-policy.js';
import type { OperationContext } from './operation-context.js';
import { derefObject, own, setOwn, type RefResolver } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';

export type GeneratedAuth = Record<string, unknown> & { auth_type: string };

export interface OperationAuth {
  auth: Record<string, unknown> | null;
  /** Further `apiKey` schemes of an AND-ed requirement sent as headers (`${VAR}` references). */
  headers?: Record<string, string>;
  /** Further `apiKey` schemes sent in the query string. */
  query?: Array<[string, string]>;
}

type SchemeKind =
  | { kind: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string }
  | { kind: 'bearer' }
  | { kind: 'basic' }
  | { kind: 'clientCredentials'; tokenUrl: string }
  | { kind: 'userToken' };

type Scheme =
  | { ok: true; key: string; variable: string; type: SchemeKind }
  | { ok: false; key: string; reason: string };

/** `bearerAuth` → `BEARER_AUTH`, `api_key` → `API_KEY`; empty or leading digit → `SCHEME_` prefix. */
export function schemeVariableName(key: string): string {
  const s = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (s === '') return 'SCHEME';
  return /^[0-9]/.test(s) ? `SCHEME_${s}` : s;
}

export interface SecurityMapperOptions {
  doc: Record<string, unknown>;
  swagger2: boolean;
  resolver: RefResolver;
  /** The spec URL as given (for the loopback rule and messages). */
  specUrl?: string;
  /** The spec URL when it is http(s); relative token URLs resolve against it. */
  httpSpecUrl?: URL;
  /** Raw `auth_tools` of the manual template. */
  authTools?: unknown;
  /** Records a document-level problem (aggregated by the report). */
  drop(location: string, construct: string, reason: string): void;
}

export class SecurityMapper {
  readonly #o: SecurityMapperOptions;
  readonly #definitions: Record<string, unknown>;
  readonly #variables = new Map<string, string>();
  readonly #schemes = new Map<string, Scheme>();
  readonly #authTools: GeneratedAuth | undefined;

  constructor(options: SecurityMapperOptions) {
    this.#o = options;
    const components = options.doc.components;
    const defs = options.swagger2
      ? options.doc.securityDefinitions
      : isPlainObject(components)
        ? components.securitySchemes
        : undefined;
    this.#definitions = isPlainObject(defs) ? defs : {};
    const used = new Set<string>();
    for (const key of Object.keys(this.#definitions)) {
      const base = schemeVariableName(key);
      let name = base;
      for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
      used.add(name);
      this.#variables.set(key, name);
    }
    const at = options.authTools;
    if (isPlainObject(at) && typeof at.auth_type === 'string') this.#authTools = at as GeneratedAuth;
    else if (at !== undefined && at !== null) options.drop('template', 'auth_tools', 'not an auth object; ignored');
  }

  /** The auth of one operation: operation `security`, else root `security`; none → null. */
  forOperation(op: Record<string, unknown>, ctx: OperationContext): OperationAuth {
    const requirements = op.security !== undefined ? op.security : this.#o.doc.security;
    if (requirements === undefined || requirements === null) return { auth: null };
    if (!Array.isArray(requirements)) {
      ctx.drop('security', 'not an array; no auth');
      return { auth: null };
    }
    const problems: string[] = [];
    for (const req of requirements) {
      if (!isPlainObject(req)) continue;
      const names = Object.keys(req);
      if (names.length === 0) return { auth: null }; // `{}`: authentication is optional
      const schemes = names.map((n) => this.#scheme(n));
      const bad = schemes.find((s): s is Extract<Scheme, { ok: false }> => !s.ok);
      if (bad) {
        problems.push(`${bad.key}: ${bad.reason}`);
        continue;
      }
      return this.#fromRequirement(schemes as Array<Extract<Scheme, { ok: true }>>, req, ctx);
    }
    if (problems.length > 0)
      ctx.drop('security', `no supported security requirement (${problems.join('; ')}); no auth`);
    return { auth: null };
  }

  #fromRequirement(
    schemes: Array<Extract<Scheme, { ok: true }>>,
    req: Record<string, unknown>,
    ctx: OperationContext,
  ): OperationAuth {
    const [first, ...rest] = schemes;
    const out: OperationAuth = { auth: this.#applyAuthTools(this.#auth(first, req), first.key) };
    for (const s of rest) {
      if (s.type.kind === 'apiKey' && s.type.in === 'header') {
        setOwn((out.headers ??= {}), s.type.name, `\${${s.variable}}`);
      } else if (s.type.kind === 'apiKey' && s.type.in === 'query') {
        (out.query ??= []).push([s.type.name, `\${${s.variable}}`]);
      } else {
        ctx.drop(
          `security scheme ${s.key}`,
          `an AND-ed ${s.type.kind === 'apiKey' ? 'cookie apiKey' : s.type.kind} scheme beyond the first cannot be expressed; not sent`,
        );
      }
    }
    return out;
  }

  #applyAuthTools(generated: GeneratedAuth, schemeKey: string): Record<string, unknown> {
    const t = this.#authTools;
    if (!t) return generated;
    let compatible = t.auth_type === generated.auth_type;
    if (compatible && generated.auth_type === 'api_key') {
      const name = typeof t.var_name === 'string' ? t.var_name : 'X-Api-Key';
      const location = typeof t.location === 'string' ? t.location : 'header';
      compatible = name.toLowerCase() === String(generated.var_name).toLowerCase() && location === generated.location;
    }
    if (compatible) return { ...t };
    this.#o.drop(
      'template',
      'auth_tools',
      `incompatible with security scheme ${schemeKey} (${describeAuth(generated)} vs ${describeAuth(t)}); the scheme's generated auth is used`,
    );
    return generated;
  }

  #auth(s: Extract<Scheme, { ok: true }>, req: Record<string, unknown>): GeneratedAuth {
    const v = s.variable;
    const t = s.type;
    switch (t.kind) {
      case 'apiKey':
        return { auth_type: 'api_key', api_key: `\${${v}}`, var_name: t.name, location: t.in };
      case 'bearer':
        return { auth_type: 'api_key', api_key: `Bearer \${${v}}`, var_name: 'Authorization', location: 'header' };
      case 'basic':
        return { auth_type: 'basic', username: `\${${v}_USERNAME}`, password: `\${${v}_PASSWORD}` };
      case 'userToken':
        return {
          auth_type: 'api_key',
          api_key: `Bearer \${${v}_ACCESS_TOKEN}`,
          var_name: 'Authorization',
          location: 'header',
        };
      case 'clientCredentials': {
        const scopes = own(req, s.key);
        const list = Array.isArray(scopes) ? scopes.filter((x): x is string => typeof x === 'string' && x !== '') : [];
        return {
          auth_type: 'oauth2',
          token_url: t.tokenUrl,
          client_id: `\${${v}_CLIENT_ID}`,
          client_secret: `\${${v}_CLIENT_SECRET}`,
          ...(list.length > 0 ? { scope: list.join(' ') } : {}),
        };
      }
    }
  }

  #scheme(key: string): Scheme {
    let s = this.#schemes.get(key);
    if (!s) {
      s = this.#classify(key);
      this.#schemes.set(key, s);
    }
    return s;
  }

  #classify(key: string): Scheme {
    const raw = own(this.#definitions, key);
    if (raw === undefined) return { ok: false, key, reason: 'not defined in the spec' };
    const d = derefObject(raw, this.#o.resolver);
    if (!d.value) return { ok: false, key, reason: d.error };
    const def = d.value;
    const variable = this.#variables.get(key)!;
    const ok = (type: SchemeKind): Scheme => ({ ok: true, key, variable, type });
    const type = typeof def.type === 'string' ? def.type : '';
    switch (type) {
      case 'apiKey': {
        const where = def.in;
        if (typeof def.name !== 'string' || def.name === '')
          return { ok: false, key, reason: 'apiKey scheme without a name' };
        if (where !== 'header' && where !== 'query' && where !== 'cookie')
          return { ok: false, key, reason: `apiKey location ${String(where)} is not supported` };
        return ok({ kind: 'apiKey', in: where, name: def.name });
      }
      case 'http': {
        const scheme = typeof def.scheme === 'string' ? def.scheme.toLowerCase() : '';
        if (scheme === 'bearer') return ok({ kind: 'bearer' });
        if (scheme === 'basic') return ok({ kind: 'basic' });
        return { ok: false, key, reason: `http scheme ${scheme || '(none)'} is not supported` };
      }
      case 'basic':
        return ok({ kind: 'basic' });
      case 'oauth2': {
        let tokenUrl: unknown;
        if (this.#o.swagger2 || def.flow !== undefined) {
          if (def.flow === 'application') tokenUrl = def.tokenUrl;
        } else {
          tokenUrl = own(own(def.flows, 'clientCredentials'), 'tokenUrl');
        }
        if (typeof tokenUrl === 'string' && tokenUrl.trim() !== '') {
          const checked = this.#tokenUrl(tokenUrl.trim(), key);
          if (typeof checked !== 'string') {
            // One unusable scheme must not sink the document: it is dropped (reported once) and requirements
            // that need it are skipped like any unsupported scheme (docs/design/openapi.md#token-url).
            this.#o.drop(`securitySchemes.${key}`, `security scheme ${key}`, checked.refused);
            return { ok: false, key, reason: checked.refused };
          }
          return ok({ kind: 'clientCredentials', tokenUrl: checked });
        }
        return ok({ kind: 'userToken' });
      }
      case 'openIdConnect':
        return ok({ kind: 'userToken' });
      default:
        return { ok: false, key, reason: `scheme type ${type || '(none)'} is not supported` };
    }
  }

  /**
   * Resolves a relative token URL against the spec URL, then applies the loopback rule (fatal: a remote spec
   * aiming at loopback is hostile) and the URL policy (a refusal, e.g. plain http to a remote host, drops the scheme).
   */
  #tokenUrl(tokenUrl: string, key: string): string | { refused: string } {
    const { httpSpecUrl, specUrl } = this.#o;
    let absolute: URL | undefined;
    try {
      absolute = new URL(tokenUrl);
    } catch {
      if (!httpSpecUrl) {
        this.#o.drop(
          `security scheme ${key}`,
          'tokenUrl',
          `relative tokenUrl ${JSON.stringify(tokenUrl)} and no http(s) spec URL; left as is (token requests will fail)`,
        );
        return tokenUrl;
      }
      try {
        absolute = new URL(tokenUrl, httpSpecUrl);
      } catch {
        absolute = undefined;
      }
    }
    if (absolute && violatesRemoteLoopback(specUrl, absolute)) {
      throw new UrlPolicyError(
        `OAuth2 tokenUrl in OpenAPI spec: ${redactUrl(absolute)} targets a loopback address, which a remote spec (${redactUrl(specUrl!)}) may not do`,
      );
    }
    try {
      return assertUrlAllowed(absolute ?? tokenUrl, 'OAuth2 tokenUrl in OpenAPI spec').href;
    } catch (e) {
      if (!(e instanceof UrlPolicyError)) throw e;
      return { refused: `${e.message}; the scheme is dropped (operations that require only it get no auth)` };
    }
  }
}

function describeAuth(a: Record<string, unknown>): string {
  if (a.auth_type === 'api_key')
    return `api_key ${String(a.var_name ?? 'X-Api-Key')} in ${String(a.location ?? 'header')}`;
  return String(a.auth_type);
}
