/**
 * URL policy, loopback classification, origins and header checks (docs/design/security.md#url-policy,
 * docs/design/security.md#redirects, docs/design/security.md#header-checks).
 * Every decision is made on the WHATWG-parsed, lowercased hostname, never on string prefixes.
 */
import { UrlPolicyError, UtcpError } from './errors.js';

function parse(url: string | URL): URL | undefined {
  if (url instanceof URL) return url;
  if (typeof url !== 'string' || url === '') return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** Lowercased, without the one trailing dot of a fully-qualified name (`localhost.` is `localhost`). */
function normalHost(hostname: string): string {
  const h = hostname.toLowerCase();
  return h.endsWith('.') && !h.startsWith('[') ? h.slice(0, -1) : h;
}

function hostOf(raw: string | URL): string | undefined {
  if (raw instanceof URL) return normalHost(raw.hostname);
  // Surrounding whitespace is dropped before any check, as every connector would drop it.
  const input = typeof raw === 'string' ? raw.trim() : raw;
  const u = parse(input);
  if (u && u.hostname) return normalHost(u.hostname);
  // A bare host (no scheme): let the URL parser normalise it.
  if (typeof input === 'string' && input && !input.includes('/')) {
    const bare = input.includes(':') && !input.startsWith('[') && input.split(':').length > 2 ? `[${input}]` : input;
    const h = parse(`http://${bare}`);
    return h ? normalHost(h.hostname) : undefined;
  }
  return undefined;
}

/**
 * `127.d.d.d` with 1 to 3 digits per part (the URL parser has already normalised IPv4 forms); read by character
 * codes, as this runs on every HTTP call (docs/design/http-exchange.md#per-call-cost).
 */
function isIpv4Loopback(host: string): boolean {
  if (!host.startsWith('127.')) return false;
  let i = 4;
  for (let part = 0; part < 3; part++) {
    const start = i;
    while (i < host.length && i - start < 4) {
      const c = host.charCodeAt(i);
      if (c < 48 || c > 57) break;
      i++;
    }
    const digits = i - start;
    if (digits < 1 || digits > 3) return false;
    if (part < 2) {
      if (host.charCodeAt(i) !== 46) return false; // "."
      i++;
    }
  }
  return i === host.length;
}

/** `localhost`, any IPv4 in 127.0.0.0/8, or `[::1]`: the hosts plain http/ws may reach. */
export function isLoopbackLiteral(urlOrHost: string | URL): boolean {
  const host = hostOf(urlOrHost);
  if (!host) return false;
  return host === 'localhost' || isIpv4Loopback(host) || host === '[::1]';
}

/** Loopback literals plus `0.0.0.0`, `[::]`, IPv4-mapped loopback and `*.localhost` (remote→loopback rule). */
export function isLoopbackLike(urlOrHost: string | URL): boolean {
  const host = hostOf(urlOrHost);
  if (!host) return false;
  if (isLoopbackLiteral(host)) return true;
  if (host === '0.0.0.0' || host === '[::]' || host.endsWith('.localhost')) return true;
  // The URL parser normalises [::ffff:127.0.0.1] to [::ffff:7f00:1].
  const mapped = /^\[(?:0{0,4}:){0,5}(?::)?ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(host);
  if (mapped) return parseInt(mapped[1], 16) >> 8 === 0x7f;
  const mappedDotted = /^\[::ffff:(\d+\.\d+\.\d+\.\d+)\]$/.exec(host);
  return !!mappedDotted && isIpv4Loopback(mappedDotted[1]);
}

/** The URL without userinfo and query string, for messages. */
export function redactUrl(url: string | URL): string {
  const u = parse(url);
  if (!u) return typeof url === 'string' ? url.split('?')[0].replace(/\/\/[^/@]*@/, '//') : String(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export type UrlKind = 'http' | 'ws';

/**
 * Throws `UrlPolicyError` unless the URL is https/wss (any host) or http/ws to a loopback literal.
 * `context` names the check in the message ("manual discovery", "tool invocation", ...).
 * @returns the parsed URL.
 */
export function assertUrlAllowed(url: string | URL, context: string, kind: UrlKind = 'http'): URL {
  const secure = kind === 'ws' ? 'wss:' : 'https:';
  const plain = kind === 'ws' ? 'ws:' : 'http:';
  const u = parse(url);
  const fail = (why: string): never => {
    const shown = redactUrl(url);
    const label = kind === 'ws' ? `WebSocket URL (${context})` : context;
    throw new UrlPolicyError(
      `${label}: ${shown || '(empty)'} is not allowed (${why}); URLs must use ${kind === 'ws' ? 'WSS' : 'HTTPS'} or be a literal loopback address`,
    );
  };
  if (!u) return fail('not a valid URL');
  if (u.username || u.password) return fail('credentials in the URL');
  if (u.protocol === secure) {
    if (!u.hostname) return fail('no host');
    return u;
  }
  if (u.protocol === plain) {
    if (!isLoopbackLiteral(u)) return fail(`plain ${plain.slice(0, -1)} to a non-loopback host`);
    return u;
  }
  return fail(`scheme ${u.protocol}`);
}

/** True when `target` would make a remote document reach a loopback-like host. */
export function violatesRemoteLoopback(sourceUrl: string | undefined, target: string | URL): boolean {
  if (!sourceUrl) return false;
  const s = parse(sourceUrl);
  if (!s || (s.protocol !== 'http:' && s.protocol !== 'https:')) return false;
  if (isLoopbackLike(s)) return false;
  return isLoopbackLike(target);
}

function effectivePort(u: URL): string {
  if (u.port) return u.port;
  if (u.protocol === 'http:' || u.protocol === 'ws:') return '80';
  if (u.protocol === 'https:' || u.protocol === 'wss:') return '443';
  return '';
}

/** Same scheme, host and effective port. Malformed input counts as cross-origin and never throws. */
export function sameOrigin(a: string | URL, b: string | URL): boolean {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return false;
  return (
    x.protocol === y.protocol &&
    x.hostname.toLowerCase() === y.hostname.toLowerCase() &&
    effectivePort(x) === effectivePort(y)
  );
}

const SENSITIVE_NAMES = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'www-authenticate',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'x-access-token',
  'x-csrf-token',
  'x-xsrf-token',
  'x-amz-security-token',
  'x-goog-api-key',
]);
const SENSITIVE_PARTS = new Set([
  'auth',
  'authn',
  'authz',
  'token',
  'key',
  'secret',
  'bearer',
  'session',
  'sid',
  'apikey',
  'jwt',
  'csrf',
  'xsrf',
]);
const SENSITIVE_JOINED = [
  'apikey',
  'authtoken',
  'accesstoken',
  'bearertoken',
  'sessionid',
  'csrftoken',
  'xsrftoken',
  'apitoken',
];

/** Whether a header must be stripped on a cross-origin redirect (docs/design/security.md#redirects). */
export function isSensitiveHeader(name: string, authHeaderNames: Iterable<string> = []): boolean {
  const n = name.toLowerCase();
  if (SENSITIVE_NAMES.has(n) || SENSITIVE_NAMES.has(n.replace(/_/g, '-'))) return true;
  if (n.split(/[-_]/).some((p) => SENSITIVE_PARTS.has(p))) return true;
  const joined = n.replace(/[-_]/g, '');
  if (SENSITIVE_JOINED.some((s) => joined.includes(s))) return true;
  for (const a of authHeaderNames) if (a.toLowerCase() === n) return true;
  return false;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Throws unless the header name is an HTTP token and neither name nor value holds CR, LF or NUL. */
export function assertHeaderSafe(name: string, value: string): void {
  if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value)) {
    const shown = name.replace(/[\r\n\0].*$/s, '');
    throw new UtcpError('HEADER_INJECTION', `Header ${shown || '(unnamed)'} contains CR/LF or NUL characters`);
  }
  if (!TOKEN.test(name))
    throw new UtcpError('HEADER_INJECTION', `Header name ${JSON.stringify(name)} is not a valid HTTP token`);
}
