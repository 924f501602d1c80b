/**
 * Bearer-token authentication and session bounds of the MCP bridge over HTTP
 * (docs/design/threat-model.md#mcp-bridge-auth): the token is checked on every request, before any session is
 * looked up or created, by comparing SHA-256 digests in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { UtcpError } from '../index.js';

/** How hosts authenticate to the HTTP bridge: a bearer token, or `'none'` (any local process may connect). */
export type McpHttpAuth = 'none' | { token: string };

export const MIN_TOKEN_LENGTH = 16;
export const MAX_TOKEN_LENGTH = 1024;
/** Live sessions at most; past it the least recently used idle session is closed. */
export const DEFAULT_MAX_SESSIONS = 50;
/** A session without a request in flight for this long is closed. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 600_000;
/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** 256 random bits, base64url (43 characters). */
export function generateBridgeToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Visible ASCII only: a token with spaces or control characters could never be sent in a header. */
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/**
 * The token to require, or undefined for `'none'`; generates one when `auth` is omitted.
 * @throws UtcpError INVALID_CONFIG naming what is wrong with the option (never the token itself).
 */
export function resolveBridgeToken(auth: McpHttpAuth | undefined): string | undefined {
  if (auth === undefined) return generateBridgeToken();
  if (auth === 'none') return undefined;
  const token = (auth as { token?: unknown } | null)?.token;
  if (typeof token !== 'string')
    throw new UtcpError('INVALID_CONFIG', 'serveMcp: http auth must be "none" or { token: string }');
  if (token.length < MIN_TOKEN_LENGTH || token.length > MAX_TOKEN_LENGTH || !VISIBLE_ASCII.test(token))
    throw new UtcpError(
      'INVALID_CONFIG',
      `serveMcp: the http auth token must be ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH} visible ASCII characters (no spaces); got ${token.length} character(s)`,
    );
  return token;
}

/**
 * A whole number of at least 1 (at most `max`), or the default when undefined.
 * @throws UtcpError INVALID_CONFIG naming the option.
 */
export function positiveIntOption(value: unknown, name: string, fallback: number, max = MAX_TIMER_MS): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    throw new UtcpError('INVALID_CONFIG', `serveMcp: ${name} must be a whole number from 1 to ${max}, got ${value}`);
  return value;
}

export type BearerCheck = 'ok' | 'missing' | 'invalid';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** A checker for one token: compares the request's bearer credential with it in constant time. */
export function bearerChecker(token: string): (req: IncomingMessage) => BearerCheck {
  const expected = digest(token);
  return (req) => {
    const header = req.headers.authorization;
    if (typeof header !== 'string') return 'missing';
    const space = header.indexOf(' ');
    if (space < 0 || header.slice(0, space).toLowerCase() !== 'bearer') return 'missing';
    // Equal-length digests: the comparison time says nothing about the token, not even its length.
    return timingSafeEqual(digest(header.slice(space + 1).trim()), expected) ? 'ok' : 'invalid';
  };
}
