/**
 * One error base class with a stable `code` and a `cause`, plus the subclasses users catch.
 * Messages name what failed and where; they never contain a secret, header value or body.
 */

export type UtcpErrorCode =
  | 'INVALID_CONFIG'
  | 'INVALID_MANUAL'
  | 'INVALID_ARGUMENTS'
  | 'TOOL_NOT_FOUND'
  | 'MANUAL_NOT_FOUND'
  | 'MANUAL_EXISTS'
  | 'UNKNOWN_TRANSPORT'
  | 'PROTOCOL_NOT_ALLOWED'
  | 'MISSING_VARIABLE'
  | 'URL_POLICY'
  | 'HEADER_INJECTION'
  | 'PATH_NOT_ALLOWED'
  | 'HTTP_STATUS'
  | 'TOOL_ERROR'
  | 'PROCESS_EXIT'
  | 'RESPONSE_TOO_LARGE'
  | 'PROTOCOL_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'TRANSPORT_FAILED'
  | 'DEPENDENCY_MISSING'
  | 'NOT_SUPPORTED'
  | 'CLIENT_CLOSED'
  | 'LIMIT_EXCEEDED'
  | 'TOOL_EXISTS'
  | 'REPOSITORY_UNAVAILABLE'
  | 'MIGRATION_FAILED'
  | 'REPOSITORY_FAILED'
  | 'CIRCUIT_OPEN';

/**
 * The key under which every `UtcpError` carries its marks: the same symbol in every copy of the package, so an error
 * thrown by one copy (a plugin's) is recognised by another (the app's), where `instanceof` is false
 * (docs/design/api.md#errors-across-copies).
 */
const ERROR_MARKS = Symbol.for('utcp-kit.error');

/**
 * The mark of one error class: its own static `errorKind` (a literal, so it survives minifiers that rename classes),
 * else its class name (subclasses written elsewhere need not declare one).
 */
function kindOf(ctor: object): string {
  const own = Object.getOwnPropertyDescriptor(ctor, 'errorKind')?.value;
  if (typeof own === 'string') return own;
  const name = Object.getOwnPropertyDescriptor(ctor, 'name')?.value;
  return typeof name === 'string' ? name : '';
}

/**
 * True when `value` is an instance of `ctor` (same copy) or carries its mark (any copy). A hostile value (a Proxy
 * whose traps throw, a forged marks array) is simply not an error of ours: nothing it does escapes.
 */
function isMarked(value: unknown, ctor: abstract new (...args: never[]) => unknown): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    if (value instanceof ctor) return true;
    const marks = (value as { [ERROR_MARKS]?: unknown })[ERROR_MARKS];
    const kind = kindOf(ctor);
    return kind !== '' && Array.isArray(marks) && marks.includes(kind);
  } catch {
    return false;
  }
}

/** Base class of every error the library throws. */
export class UtcpError extends Error {
  /** The mark `isInstance` looks for (docs/design/api.md#errors-across-copies). */
  static readonly errorKind: string = 'UtcpError';

  /**
   * True when `value` is an error of this class or a subclass, also when it comes from another copy of the package
   * (where `instanceof` is false): `HttpStatusError.isInstance(e)`, `UtcpError.isInstance(e)`.
   */
  static isInstance<T>(this: abstract new (...args: never[]) => T, value: unknown): value is T {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class it is called on (HttpStatusError.isInstance).
    return isMarked(value, this);
  }

  override name = 'UtcpError';
  readonly code: UtcpErrorCode;
  constructor(code: UtcpErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    const marks: string[] = [];
    for (let c: object | null = new.target; c && c !== Error && c !== Function.prototype; c = Object.getPrototypeOf(c))
      marks.push(kindOf(c));
    Object.defineProperty(this, ERROR_MARKS, { value: Object.freeze(marks) });
  }
}

/** One problem found by validation, with the path to the offending value. */
export interface ValidationIssue {
  /** e.g. `tools[3].tool_call_template.url` */
  path: string;
  message: string;
}

export function formatIssues(issues: readonly ValidationIssue[], max = 10): string {
  const shown = issues.slice(0, max).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  if (issues.length > max) shown.push(`… and ${issues.length - max} more`);
  return shown.join('; ');
}

/** A manual, call template or config failed validation. `issues` lists every problem with its path. */
export class UtcpValidationError extends UtcpError {
  static override readonly errorKind: string = 'UtcpValidationError';
  override name = 'UtcpValidationError';
  readonly issues: ValidationIssue[];
  constructor(what: string, issues: ValidationIssue[], code: UtcpErrorCode = 'INVALID_MANUAL') {
    super(code, `Invalid ${what}: ${formatIssues(issues)}`);
    this.issues = issues;
  }
}

/** Tool arguments do not match the tool's `inputs` schema. */
export class UtcpArgumentsError extends UtcpError {
  static override readonly errorKind: string = 'UtcpArgumentsError';
  override name = 'UtcpArgumentsError';
  readonly toolName: string;
  readonly issues: ValidationIssue[];
  constructor(toolName: string, issues: ValidationIssue[]) {
    super('INVALID_ARGUMENTS', `Invalid arguments for ${toolName}: ${formatIssues(issues)}`);
    this.toolName = toolName;
    this.issues = issues;
  }
}

export class ToolNotFoundError extends UtcpError {
  static override readonly errorKind: string = 'ToolNotFoundError';
  override name = 'ToolNotFoundError';
  readonly toolName: string;
  /** Registered tool names close to `toolName`, best first (may be empty). */
  readonly suggestions: string[];
  /**
   * @param reason why the tool is missing when the client knows (e.g. it was dropped at registration)
   */
  constructor(toolName: string, suggestions: readonly string[] = [], reason?: string) {
    const hint = reason
      ? `: ${reason}`
      : suggestions.length
        ? `. Did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
        : '';
    super('TOOL_NOT_FOUND', `Tool not found: ${toolName}${hint}`);
    this.toolName = toolName;
    this.suggestions = [...suggestions];
  }
}

/** A `${VAR}` reference has no value. `variableName` is the namespaced key to set. */
export class UtcpVariableNotFoundError extends UtcpError {
  static override readonly errorKind: string = 'UtcpVariableNotFoundError';
  override name = 'UtcpVariableNotFoundError';
  readonly variableName: string;
  constructor(variableName: string) {
    super(
      'MISSING_VARIABLE',
      `Variable ${variableName} is not set: define it in the config's "variables", in a load_variables_from source (e.g. .env), or in the environment`,
    );
    this.variableName = variableName;
  }
}

/** Work or output would exceed a configured limit; `limit` is its key in the config's `limits`. */
export class UtcpLimitError extends UtcpError {
  static override readonly errorKind: string = 'UtcpLimitError';
  override name = 'UtcpLimitError';
  readonly limit: string;
  constructor(limit: string, message: string) {
    super('LIMIT_EXCEEDED', message);
    this.limit = limit;
  }
}

/** A URL failed the URL policy (docs/design/security.md#url-policy). */
export class UrlPolicyError extends UtcpError {
  static override readonly errorKind: string = 'UrlPolicyError';
  override name = 'UrlPolicyError';
  constructor(message: string) {
    super('URL_POLICY', message);
  }
}

/** The largest parsed error body kept as `problem` (its JSON text), so an error stays small enough to log. */
const MAX_PROBLEM_CHARS = 16 * 1024;

/** A remote endpoint answered with an HTTP error status. */
export class HttpStatusError extends UtcpError {
  static override readonly errorKind: string = 'HttpStatusError';
  override name = 'HttpStatusError';
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  /** At most 2 KiB of the response body. */
  readonly bodyExcerpt: string;
  /**
   * The error body when it is a JSON object (RFC 9457 `application/problem+json`, or any JSON error body), read from
   * up to 64 KiB of it and kept when its JSON is at most 16 KiB: `errors`, `invalid-params` and the like, which a
   * model needs to fix its arguments (docs/design/http-exchange.md#problem-details).
   */
  readonly problem: Record<string, unknown> | undefined;
  constructor(status: number, url: string, body = '', statusText = '', options?: ErrorOptions) {
    // The server's short explanation and its field errors join the message (see `explainHttpBody`); the body is in
    // `bodyExcerpt` and `problem`. Substituted secrets are redacted from messages where errors leave the client.
    const problem = parseProblem(body);
    const why = explainHttpBody(body, problem);
    super(
      'HTTP_STATUS',
      `HTTP ${status}${statusText ? ' ' + statusText : ''} from ${url}${why ? `: ${why}` : ''}`,
      options,
    );
    this.status = status;
    this.statusText = statusText;
    this.url = url;
    this.bodyExcerpt = body.slice(0, 2048);
    this.problem = problem !== undefined && JSON.stringify(problem).length <= MAX_PROBLEM_CHARS ? problem : undefined;
  }
}

/** The body as a JSON object, or undefined (not JSON, cut, or not an object). */
function parseProblem(body: string): Record<string, unknown> | undefined {
  const text = body.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const doc = JSON.parse(text) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** At most this many characters of field errors join the message. */
const MAX_FIELD_ERRORS_CHARS = 600;

/**
 * Field-level errors of a problem document, as `field: message` parts: ASP.NET's `errors: { Field: [..] }`, RFC 9457's
 * `invalid-params: [{ name, reason }]`, and `errors: [{ field|pointer|path, message|detail }]` lists.
 */
function fieldErrors(problem: Record<string, unknown>): string[] {
  const out: string[] = [];
  const text = (v: unknown) =>
    typeof v === 'string' ? v : Array.isArray(v) ? v.filter((x) => typeof x === 'string').join(' ') : '';
  const errors = problem.errors;
  if (errors && typeof errors === 'object' && !Array.isArray(errors)) {
    for (const [field, v] of Object.entries(errors as Record<string, unknown>)) {
      const t = text(v);
      if (t) out.push(field ? `${field}: ${t}` : t);
    }
  }
  const lists = [
    Array.isArray(errors) ? errors : [],
    Array.isArray(problem['invalid-params']) ? problem['invalid-params'] : [],
  ];
  for (const list of lists)
    for (const item of list as unknown[]) {
      if (!item || typeof item !== 'object') continue;
      const e = item as Record<string, unknown>;
      const where = [e.name, e.field, e.pointer, e.path, e.parameter].find((x) => typeof x === 'string') as
        | string
        | undefined;
      const what = [e.reason, e.message, e.detail, e.description].find((x) => typeof x === 'string') as
        | string
        | undefined;
      if (what) out.push(where ? `${where}: ${what}` : what);
    }
  return out;
}

const EXPLANATION_FIELDS = ['message', 'error_description', 'detail', 'error', 'title', 'description', 'reason'];

/**
 * The one-line explanation a server put in an error body: the first string among the usual JSON fields
 * (`message`, `error_description`, `detail`, `error`, ... also one level down, e.g. `{ error: { message } }`),
 * else the first line of a short plain-text body. HTML pages and long bodies give nothing. At most 200 characters.
 */
export function explainHttpBody(
  body: string,
  parsed: Record<string, unknown> | undefined = parseProblem(body),
): string {
  const text = body.trim();
  if (!text) return '';
  let found: string | undefined;
  let details = '';
  if (text.startsWith('{')) {
    try {
      if (!parsed) throw new Error('not a JSON object');
      const doc = parsed;
      const pick = (o: Record<string, unknown>): string | undefined => {
        for (const f of EXPLANATION_FIELDS)
          if (typeof o[f] === 'string' && (o[f] as string).trim()) return o[f] as string;
        return undefined;
      };
      found = pick(doc);
      for (const v of Object.values(doc)) {
        if (found) break;
        if (v && typeof v === 'object' && !Array.isArray(v)) found = pick(v as Record<string, unknown>);
        else if (Array.isArray(v) && v[0] && typeof v[0] === 'object') found = pick(v[0] as Record<string, unknown>);
      }
      const fields = fieldErrors(doc).join('; ').replace(/\s+/g, ' ');
      if (fields && !found?.includes(fields))
        details = fields.length > MAX_FIELD_ERRORS_CHARS ? `${fields.slice(0, MAX_FIELD_ERRORS_CHARS - 1)}…` : fields;
    } catch {
      // A truncated or invalid JSON body explains nothing reliable.
    }
  } else if (!text.startsWith('<') && text.length <= 500) {
    found = text.split('\n')[0];
  }
  if (!found && !details) return '';
  let line = (found ?? '').replace(/\s+/g, ' ').trim();
  if (line.length > 200) line = `${line.slice(0, 199)}…`;
  if (!details) return line;
  return line ? `${line.replace(/[.:;]$/, '')} (${details})` : details;
}

/** The remote tool reported a failure (MCP `isError`, GraphQL `errors`, gRPC status, a `tool_error` frame). */
export class ToolExecutionError extends UtcpError {
  static override readonly errorKind: string = 'ToolExecutionError';
  override name = 'ToolExecutionError';
  readonly details: unknown;
  constructor(message: string, details?: unknown, options?: ErrorOptions) {
    super('TOOL_ERROR', message, options);
    this.details = details;
  }
}

/** A command-line tool exited with a non-zero status. */
export class CliExitError extends UtcpError {
  static override readonly errorKind: string = 'CliExitError';
  override name = 'CliExitError';
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Last 4 KiB of the combined output. */
  readonly outputTail: string;
  constructor(exitCode: number | null, signal: string | null, outputTail: string, what = 'command') {
    const how = exitCode !== null ? `exited with code ${exitCode}` : `was killed by ${signal}`;
    const tail = outputTail.trim() ? `: ${outputTail.trim().slice(-500)}` : '';
    super('PROCESS_EXIT', `${what} ${how}${tail}`);
    this.exitCode = exitCode;
    this.signal = signal;
    this.outputTail = outputTail.slice(-4096);
  }
}

export class UtcpTimeoutError extends UtcpError {
  static override readonly errorKind: string = 'UtcpTimeoutError';
  override name = 'UtcpTimeoutError';
  readonly timeoutMs: number | undefined;
  constructor(what: string, timeoutMs?: number, options?: ErrorOptions) {
    super('TIMEOUT', `${what} timed out${timeoutMs !== undefined ? ` after ${timeoutMs} ms` : ''}`, options);
    this.timeoutMs = timeoutMs;
  }
}

export class UtcpAbortError extends UtcpError {
  static override readonly errorKind: string = 'UtcpAbortError';
  override name = 'UtcpAbortError';
  constructor(what: string, options?: ErrorOptions) {
    super('ABORTED', `${what} was aborted`, options);
  }
}

/** Network, process or protocol failure inside a transport. */
export class TransportError extends UtcpError {
  static override readonly errorKind: string = 'TransportError';
  override name = 'TransportError';
  constructor(message: string, options?: ErrorOptions & { code?: UtcpErrorCode }) {
    super(options?.code ?? 'TRANSPORT_FAILED', message, options);
  }
}

/**
 * Calls to an origin fail fast because its circuit is open (docs/design/resilience.md#circuit-breaker): it failed
 * `failures` times in a row; one probe call may pass at `probeAt` (or a probe is already in flight).
 */
export class CircuitOpenError extends UtcpError {
  static override readonly errorKind: string = 'CircuitOpenError';
  override name = 'CircuitOpenError';
  /** The origin (scheme, host and port; never a path, query or credentials). */
  readonly origin: string;
  /** When a probe call may pass. */
  readonly probeAt: Date;
  constructor(what: string, origin: string, probeAt: Date, probing: boolean) {
    super(
      'CIRCUIT_OPEN',
      probing
        ? `${what}: circuit open for ${origin}; a probe call is in flight, calls fail fast until it succeeds`
        : `${what}: circuit open for ${origin} after repeated failures; calls fail fast until a probe at ${probeAt.toISOString()}`,
    );
    this.origin = origin;
    this.probeAt = probeAt;
  }
}

/**
 * A shared tool repository's database refused or failed (docs/design/repository-postgres.md#errors). Codes:
 * `TOOL_EXISTS`, `REPOSITORY_UNAVAILABLE` (cannot connect, or the connection was lost), `MIGRATION_FAILED`,
 * `TIMEOUT`, `REPOSITORY_FAILED`. Messages and `cause` never carry the connection string's password.
 */
export class RepositoryError extends UtcpError {
  static override readonly errorKind: string = 'RepositoryError';
  override name = 'RepositoryError';
  /** The repository method that failed, e.g. `saveManual`. */
  readonly operation: string;
  /** The database's SQLSTATE (e.g. `23505`) or the system error code (e.g. `ECONNREFUSED`), when known. */
  readonly dbCode: string | undefined;
  constructor(code: UtcpErrorCode, operation: string, message: string, dbCode?: string, options?: ErrorOptions) {
    super(code, message, options);
    this.operation = operation;
    this.dbCode = dbCode;
  }
}

/** True for every `UtcpError`, also one from another copy of the package (`UtcpError.isInstance`). */
export function isUtcpError(value: unknown): value is UtcpError {
  return UtcpError.isInstance(value);
}
