/**
 * Database failures turned into typed `RepositoryError`s (docs/design/repository-postgres.md#errors): a stable
 * code, a message naming the operation and the manual or tool, the SQLSTATE or system error code in `dbCode`.
 * The driver's own error is never exposed as it is: it may carry the connection string (Node's URL errors keep
 * their input) or row values. `cause` is a plain Error holding the driver's message with every known secret
 * (the connection string, its password) replaced by `***`.
 */
import { RepositoryError, UtcpError, type UtcpErrorCode } from '../../core/errors.js';

/** System errors that mean the server cannot be reached or the connection broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ENOENT', // a Unix socket path that does not exist
]);

/**
 * node-postgres reports a broken or refused connection with these messages and no code (`SASL: …`: the server asked
 * for a password and the connection string has none).
 */
const CONNECTION_MESSAGES =
  /Connection terminated|timeout expired|connection timeout|Client has encountered a connection error|Client was closed|not queryable|Cannot use a pool after calling end|^SASL: /i;

/** The part of a driver error we read. */
interface DriverError {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

function codeOf(error: unknown): string | undefined {
  const e = error as DriverError | undefined;
  if (typeof e?.code === 'string') return e.code;
  // `connect` to a name with several addresses fails with an AggregateError of one error per address.
  if (Array.isArray(e?.errors)) for (const inner of e.errors) if (codeOf(inner)) return codeOf(inner);
  return undefined;
}

/** Is this the connection failing (refused, lost, timed out, server shutting down), rather than a statement? */
export function isConnectionError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01-57P03 (server shutting down / restarting), 53300 (too many
    // connections), 28xxx (authentication), 3D000 (no such database): the catalog cannot be reached.
    if (/^(08|28)/.test(code) || ['57P01', '57P02', '57P03', '53300', '3D000'].includes(code)) return true;
  }
  const message = (error as DriverError | undefined)?.message;
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/** Hides the secrets of one connection string in any text. */
export class SecretScrubber {
  readonly #secrets: string[] = [];
  /** `user@host:port/database`, safe to show. */
  readonly target: string;

  constructor(connectionString?: string) {
    let target = 'an in-process PGlite database';
    if (connectionString !== undefined) {
      this.#add(connectionString);
      target = 'the configured PostgreSQL server';
      try {
        const url = new URL(connectionString);
        if (url.password) {
          this.#add(url.password);
          this.#add(safeDecode(url.password));
        }
        const db = url.pathname.replace(/^\//, '');
        target = `PostgreSQL ${url.username ? `${safeDecode(url.username)}@` : ''}${url.host || 'localhost'}${db ? `/${safeDecode(db)}` : ''}`;
      } catch {
        // A connection string that is not a URL (key=value): its password, if any, is hidden by the pattern below.
      }
    }
    this.target = target;
  }

  #add(secret: string): void {
    if (secret !== '' && !this.#secrets.includes(secret)) this.#secrets.push(secret);
    // Longest first, so a password inside the connection string does not break the string's replacement.
    this.#secrets.sort((a, b) => b.length - a.length);
  }

  text(value: string): string {
    let out = value;
    for (const s of this.#secrets) out = out.split(s).join('***');
    return out.replace(/(password\s*=\s*)('[^']*'|\S+)/gi, '$1***').replace(/(:\/\/[^:/@\s]*:)[^@\s]*@/g, '$1***@');
  }

  /** The driver error's message, scrubbed. */
  message(error: unknown): string {
    const m = (error as DriverError | undefined)?.message;
    // PGlite (Emscripten) may throw plain objects: say what they hold, never "[object Object]".
    const text = typeof m === 'string' && m !== '' ? m : describeThrown(error);
    return this.text(text);
  }
}

function describeThrown(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  try {
    const json = JSON.stringify(error);
    if (json && json !== '{}') return json.length > 300 ? `${json.slice(0, 300)}…` : json;
  } catch {
    // circular: fall through
  }
  const name = (error as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `${name} thrown` : 'a non-Error value was thrown';
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** What a repository method was doing, for the message. */
export interface Operation {
  /** The method, e.g. `saveManual`. */
  name: string;
  manual?: string;
}

function describe(op: Operation): string {
  return op.manual === undefined ? op.name : `${op.name}("${op.manual}")`;
}

/**
 * Turns whatever a driver threw into a `RepositoryError` (a `UtcpError` passes through unchanged).
 * `code` forces the code (e.g. MIGRATION_FAILED) unless the connection itself failed.
 */
export function repositoryError(
  error: unknown,
  op: Operation,
  scrub: SecretScrubber,
  options: { code?: UtcpErrorCode; what?: string } = {},
): UtcpError {
  if (error instanceof UtcpError) return error;
  const dbCode = codeOf(error);
  const driverMessage = scrub.message(error);
  const cause = Object.assign(new Error(driverMessage), dbCode === undefined ? {} : { code: dbCode });
  let code: UtcpErrorCode;
  let message: string;
  if (isConnectionError(error)) {
    code = 'REPOSITORY_UNAVAILABLE';
    message =
      op.name === 'open'
        ? `Cannot connect to the tool repository (${scrub.target}): ${driverMessage}`
        : `The tool repository (${scrub.target}) was unreachable or lost the connection during ${describe(op)}: ${driverMessage}`;
  } else if (dbCode === 'ERR_INVALID_URL') {
    code = 'INVALID_CONFIG';
    message =
      'The connection string of the tool repository is not a valid URL (postgres://user:password@host:port/database)';
  } else if (dbCode === '57014') {
    code = 'TIMEOUT';
    message = `The tool repository's statement timed out during ${describe(op)}: ${driverMessage}`;
  } else {
    code = options.code ?? 'REPOSITORY_FAILED';
    message = `${options.what ?? `The tool repository failed during ${describe(op)}`}: ${driverMessage}`;
  }
  return new RepositoryError(
    code,
    op.name,
    `${message}${dbCode && /^[0-9A-Z]{5}$/.test(dbCode) ? ` (SQLSTATE ${dbCode})` : ''}`,
    dbCode,
    { cause },
  );
}

/** The tool name of a unique violation on `tools.name`, from the server's detail line, or undefined. */
export function duplicateToolName(error: unknown): string | undefined {
  const e = error as { code?: unknown; detail?: unknown; constraint?: unknown } | undefined;
  if (e?.code !== '23505' || typeof e.detail !== 'string') return undefined;
  const m = /^Key \(name\)=\(([\s\S]*)\) already exists\.?$/.exec(e.detail);
  return m?.[1];
}
