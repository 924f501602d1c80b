import type { ApprovalDecision, ApprovalRequest } from '../../src/agent/index.js';
import type { JsonObject } from '../../src/index.js';

/** Asks one question on the terminal and resolves with the typed line. */
export type AskLine = (question: string, options: { signal: AbortSignal; prefill?: string }) => Promise<string>;

export interface TerminalApproverOptions {
  ask: AskLine;
  /** Where notes go. */
  write: (text: string) => void;
  /** Extra lines shown before the question (e.g. the change an edit would make). */
  describe?: (request: ApprovalRequest) => string | undefined;
}

function argsText(args: JsonObject): string {
  const text = JSON.stringify(args);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * An approver that asks on the terminal: `y` runs the call, `n` refuses it (`n: reason` tells the model why),
 * `e` lets the user type replacement arguments as JSON (prefilled with the model's).
 */
export function terminalApprover(options: TerminalApproverOptions) {
  return async (request: ApprovalRequest, { signal }: { signal: AbortSignal }): Promise<ApprovalDecision> => {
    const details = options.describe?.(request);
    if (details) options.write(`${details.endsWith('\n') ? details : `${details}\n`}`);
    for (;;) {
      const answer = (
        await options.ask(`? ${request.toolName}(${argsText(request.args)}) run it? [y/n/e] `, { signal })
      ).trim();
      const lower = answer.toLowerCase();
      if (lower === 'y' || lower === 'yes') return { type: 'allow' };
      if (lower === 'n' || lower === 'no') return { type: 'deny', reason: 'the user declined' };
      const withReason = /^no?\s*[:-]\s*(.+)$/is.exec(answer);
      if (withReason) return { type: 'deny', reason: withReason[1].trim() };
      if (lower === 'e' || lower === 'edit') {
        const typed = await options.ask('arguments (JSON): ', { signal, prefill: JSON.stringify(request.args) });
        try {
          const parsed: unknown = JSON.parse(typed);
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
            return { type: 'edit', args: parsed as JsonObject };
          options.write('  the arguments must be a JSON object\n');
        } catch (error) {
          options.write(`  not valid JSON: ${error instanceof Error ? error.message : String(error)}\n`);
        }
        continue;
      }
      options.write('  answer y (run it), n (refuse it; "n: reason" tells the model why) or e (edit the arguments)\n');
    }
  };
}

/** An approver for sessions without a terminal: refuses with a note on how to allow the calls. */
export function nonInteractiveApprover(hint: string) {
  return (): ApprovalDecision => ({ type: 'deny', reason: `needs approval, but stdin is not a terminal; ${hint}` });
}
