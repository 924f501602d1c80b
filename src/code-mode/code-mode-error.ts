import { UtcpError } from '../index.js';

/** One tool call a script made. */
export interface CodeModeCall {
  /** The tool's full name, `manual.tool`. */
  tool: string;
  ok: boolean;
  durationMs: number;
  /** The error's message when the call failed. */
  error?: string;
}

/**
 * A code-mode run failed: `TIMEOUT` (the deadline or the signal stopped it), `LIMIT_EXCEEDED` (memory or stack),
 * `TOOL_ERROR` (the script threw), `INVALID_ARGUMENTS` (syntax error), `DEPENDENCY_MISSING` (no engine installed).
 * `logs` and `calls` hold what the script did before it failed.
 */
export class CodeModeError extends UtcpError {
  static override readonly errorKind: string = 'CodeModeError';
  override name = 'CodeModeError';
  logs: string[] = [];
  calls: CodeModeCall[] = [];
}
