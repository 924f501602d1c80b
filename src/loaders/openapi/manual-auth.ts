/**
 * Auth and static headers of the manual template applied to generated tools
 * (docs/design/openapi.md#manual-auth): what the user configured for a spec that declares no scheme
 * (GitHub's REST spec declares none), or, with `openapi_auth: "override"`, instead of the spec's schemes.
 * Only `${VAR}` references are copied: a literal secret never lands in a stored tool.
 */
import { setOwn } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';

/** `fill` (default): only operations the spec gives no auth; `override`: every operation except `security: []` ones. */
export type OpenApiAuthMode = 'fill' | 'override';

export interface ManualAuthInput {
  /** The template's `auth_tools` (meant for the tools). */
  authTools?: unknown;
  /** The template's own `auth` (used to fetch the spec; applied to tools when `auth_tools` is absent). */
  auth?: unknown;
  /** The template's static `headers`. */
  headers?: unknown;
  mode?: unknown;
}

export interface ManualAuth {
  mode: OpenApiAuthMode;
  /** The auth generated tools get when the rule says so, or undefined. */
  auth?: Record<string, unknown>;
  /** Static headers copied into every generated tool. */
  headers?: Record<string, string>;
}

const SECRET_FIELDS: Record<string, readonly string[]> = {
  api_key: ['api_key'],
  basic: ['username', 'password'],
  oauth2: ['client_id', 'client_secret', 'refresh_token'],
};
const SENSITIVE_HEADER = /auth|key|token|secret|passw|cookie|session|signature|credential/i;
/** Negotiation headers for the spec download, wrong for API calls. */
const SPEC_ONLY_HEADERS = new Set(['accept', 'accept-encoding', 'if-none-match', 'if-modified-since']);
const VARIABLE_REF = /\$\{[^}]+\}|\$[A-Za-z_][A-Za-z0-9_]*/;

function isReference(value: unknown): boolean {
  return typeof value === 'string' && VARIABLE_REF.test(value);
}

/**
 * Decides once per document what the manual template contributes to generated tools. `drop` records
 * what is not applied and why.
 */
export function resolveManualAuth(
  input: ManualAuthInput,
  drop: (construct: string, reason: string) => void,
): ManualAuth {
  let mode: OpenApiAuthMode = 'fill';
  if (input.mode === 'override' || input.mode === 'fill') mode = input.mode;
  else if (input.mode !== undefined && input.mode !== null)
    drop('openapi_auth', `unknown value ${JSON.stringify(input.mode)} (expected "fill" or "override"); "fill" used`);
  const out: ManualAuth = { mode };

  const fromTools = isPlainObject(input.authTools) && typeof input.authTools.auth_type === 'string';
  const candidate = fromTools
    ? input.authTools
    : isPlainObject(input.auth) && typeof input.auth.auth_type === 'string'
      ? input.auth
      : undefined;
  if (isPlainObject(candidate)) {
    const field = fromTools ? 'auth_tools' : 'auth';
    const secrets = SECRET_FIELDS[String(candidate.auth_type)] ?? [];
    const literal = secrets.filter(
      (k) => typeof candidate[k] === 'string' && candidate[k] !== '' && !isReference(candidate[k]),
    );
    if (fromTools || literal.length === 0) out.auth = { ...candidate };
    else {
      drop(
        field,
        `${literal.join(', ')} holds a literal value; write it as a \${VAR} reference to apply it to the generated tools (secrets are never copied into stored tools)`,
      );
    }
  }

  if (isPlainObject(input.headers)) {
    for (const name of Object.keys(input.headers)) {
      const value = input.headers[name];
      if (typeof value !== 'string') continue;
      if (SPEC_ONLY_HEADERS.has(name.toLowerCase())) {
        drop(`header ${name}`, 'a negotiation header for the spec download; not copied into the tools');
        continue;
      }
      if (!isReference(value) && SENSITIVE_HEADER.test(name)) {
        drop(
          `header ${name}`,
          'holds a literal value under a sensitive name; write it as a ${VAR} reference to apply it to the generated tools',
        );
        continue;
      }
      setOwn((out.headers ??= {}), name, value);
    }
  }
  return out;
}

/** True when the operation (or, without its own, the document) says `security: []`: a public endpoint. */
export function explicitlyPublic(op: Record<string, unknown>, doc: Record<string, unknown>): boolean {
  const req = op.security !== undefined ? op.security : doc.security;
  return Array.isArray(req) && req.length === 0;
}
