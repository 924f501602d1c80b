import type { AgentEvent } from '../../src/agent/index.js';

const MAX_ARGS_CHARS = 200;

export interface ToolLogOptions {
  /** Where the lines go. @default process.stderr */
  write?: (text: string) => void;
  /** Colour the marks. @default false */
  color?: boolean;
}

function compactArgs(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? '';
  } catch {
    text = String(args);
  }
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS - 1)}…` : text;
}

/** One line of an error's message, without the client's `Tool <name> failed: ` prefix. */
export function shortReason(error: unknown, toolName: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const prefix = `Tool ${toolName} failed: `;
  const text = message.startsWith(prefix) ? message.slice(prefix.length) : message;
  return text.split('\n')[0].trim() || 'unknown error';
}

/**
 * An agent event listener that shows each tool call on one line per phase:
 * `→ name(args)` when it starts, `✓ name (123 ms)` when it succeeds, `× name failed: reason` when it fails,
 * `× name denied: reason` when it is refused, `✎ name: arguments edited` when the user changed them.
 */
export function createToolLog(options: ToolLogOptions = {}): (event: AgentEvent) => void {
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const paint = (code: number, s: string) => (options.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const started = new Set<string>();
  const failures = new Map<string, unknown>();
  return (event) => {
    switch (event.type) {
      case 'tool_call_start':
        started.add(event.toolCallId);
        write(`${paint(36, '→')} ${event.toolName}(${compactArgs(event.args)})\n`);
        break;
      case 'error':
        if (event.phase !== 'tool_call' || !event.toolCallId) break;
        // Failures before the call started (unknown tool, malformed arguments) get no end event.
        if (started.has(event.toolCallId)) failures.set(event.toolCallId, event.error);
        else
          write(
            `${paint(31, '×')} ${event.toolName ?? 'tool'} failed: ${shortReason(event.error, event.toolName ?? '')}\n`,
          );
        break;
      case 'tool_call_end': {
        started.delete(event.toolCallId);
        const error = failures.get(event.toolCallId);
        failures.delete(event.toolCallId);
        if (event.isError)
          write(
            `${paint(31, '×')} ${event.toolName} failed: ${error === undefined ? 'the tool reported an error' : shortReason(error, event.toolName)}\n`,
          );
        else write(`${paint(32, '✓')} ${event.toolName} (${Math.round(event.durationMs)} ms)\n`);
        break;
      }
      case 'approval':
        if (event.decision === 'deny')
          write(`${paint(31, '×')} ${event.toolName} denied: ${event.reason ?? 'not approved'}\n`);
        else if (event.decision === 'edit') write(`${paint(33, '✎')} ${event.toolName}: arguments edited\n`);
        break;
      case 'step_limit_reached':
        write(`${paint(33, '!')} step limit (${event.maxSteps}) reached; asking for a final answer\n`);
        break;
      default:
        break;
    }
  };
}
