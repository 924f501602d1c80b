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
  | 'CLIENT_CLOSED';

/** Base class of every error the library throws. */
export class UtcpError extends Error {
  override name = 'UtcpError';
  readonly code: UtcpErrorCode;
  constructor(code: UtcpErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
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
  override name = 'UtcpValidationError';
  readonly issues: ValidationIssue[];
  constructor(what: string, issues: ValidationIssue[], code: UtcpErrorCode = 'INVALID_MANUAL') {
    super(code, `Invalid ${what}: ${formatIssues(issues)}`);
    this.issues = issues;
  }
}

/** Tool arguments do not match the tool's `inputs` schema. */
export class UtcpArgumentsError extends UtcpError {
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
  override name = 'ToolNotFoundError';
  readonly toolName: string;
  constructor(toolName: string) {
    super('TOOL_NOT_FOUND', `Tool not found: ${toolName}`);
    this.toolName = toolName;
  }
}

/** A `${VAR}` reference has no value. `variableName` is the namespaced key to set. */
export class UtcpVariableNotFoundError extends UtcpError {
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

/** A URL failed the URL policy (docs/design/security.md#url-policy). */
export class UrlPolicyError extends UtcpError {
  override name = 'UrlPolicyError';
  constructor(message: string) {
    super('URL_POLICY', message);
  }
}

/** A remote endpoint answered with an HTTP error status. */
export class HttpStatusError extends UtcpError {
  override name = 'HttpStatusError';
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  /** At most 2 KiB of the response body. */
  readonly bodyExcerpt: string;
  constructor(status: number, url: string, bodyExcerpt = '', statusText = '', options?: ErrorOptions) {
    // The body stays out of the message (a server may echo credentials); read `bodyExcerpt` deliberately.
    super('HTTP_STATUS', `HTTP ${status}${statusText ? ' ' + statusText : ''} from ${url}`, options);
    this.status = status;
    this.statusText = statusText;
    this.url = url;
    this.bodyExcerpt = bodyExcerpt.slice(0, 2048);
  }
}

/** The remote tool reported a failure (MCP `isError`, GraphQL `errors`, gRPC status, a `tool_error` frame). */
export class ToolExecutionError extends UtcpError {
  override name = 'ToolExecutionError';
  readonly details: unknown;
  constructor(message: string, details?: unknown, options?: ErrorOptions) {
    super('TOOL_ERROR', message, options);
    this.details = details;
  }
}

/** A command-line tool exited with a non-zero status. */
export class CliExitError extends UtcpError {
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
  override name = 'UtcpTimeoutError';
  readonly timeoutMs: number | undefined;
  constructor(what: string, timeoutMs?: number, options?: ErrorOptions) {
    super('TIMEOUT', `${what} timed out${timeoutMs !== undefined ? ` after ${timeoutMs} ms` : ''}`, options);
    this.timeoutMs = timeoutMs;
  }
}

export class UtcpAbortError extends UtcpError {
  override name = 'UtcpAbortError';
  constructor(what: string, options?: ErrorOptions) {
    super('ABORTED', `${what} was aborted`, options);
  }
}

/** Network, process or protocol failure inside a transport. */
export class TransportError extends UtcpError {
  override name = 'TransportError';
  constructor(message: string, options?: ErrorOptions & { code?: UtcpErrorCode }) {
    super(options?.code ?? 'TRANSPORT_FAILED', message, options);
  }
}

export function isUtcpError(value: unknown): value is UtcpError {
  return value instanceof UtcpError;
}
