import { createInterface, type Interface } from 'node:readline/promises';
import {
  runAgent,
  userMessage,
  type AgentEvent,
  type AgentMessage,
  type ApprovalOptions,
  type ApprovalRequest,
  type ChatModel,
} from '../../src/agent/index.js';
import type { UtcpClient } from '../../src/index.js';
import { nonInteractiveApprover, terminalApprover } from './terminal-approver.js';
import { createToolLog } from './tool-log.js';

export interface ChatSessionOptions {
  client: UtcpClient;
  model: ChatModel;
  system?: string;
  /** Which calls ask for approval (rules and default action). `--yes` turns every `ask` into `allow`. */
  policy?: Pick<ApprovalOptions, 'policy' | 'defaultAction'>;
  /** Approve every call that would ask. */
  yes: boolean;
  /** How to allow calls when nobody can be asked (shown to the user and the model). @default "rerun with --yes to allow it" */
  nonInteractiveHint?: string;
  /** Lines shown before an approval question. */
  describeApproval?: (request: ApprovalRequest) => string | undefined;
  /** Run this one turn and return instead of chatting. */
  prompt?: string;
  maxSteps?: number;
  /** Stream the answer as it is written. @default stdout is a terminal */
  stream?: boolean;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Resolves with the next line, or undefined when the interface closes first (Ctrl+D). */
function questionOrClose(rl: Interface, question: string, signal?: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const onClose = () => resolve(undefined);
    rl.once('close', onClose);
    rl.question(question, signal ? { signal } : {}).then(
      (line) => {
        rl.off('close', onClose);
        resolve(line);
      },
      (error: unknown) => {
        rl.off('close', onClose);
        reject(error);
      },
    );
  });
}

/**
 * A terminal chat over a client's tools. Answers go to stdout; tool calls, approvals and errors to stderr.
 * With `prompt`, runs one turn and resolves with the exit code (0, or 1 when the turn failed); otherwise reads
 * turns from the terminal (or, when stdin is not a terminal, one per input line) until end of input.
 */
export async function runChatSession(options: ChatSessionOptions): Promise<number> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const interactive = stdin.isTTY === true;
  const stream = options.stream ?? stdout.isTTY === true;
  const note = (text: string) => void stderr.write(text);
  // One turn without a terminal reads nothing from stdin, so a pipe left open does not hold the process.
  const rl =
    interactive || options.prompt === undefined
      ? createInterface({ input: stdin, output: stderr, terminal: interactive })
      : undefined;

  const ask = async (question: string, { signal, prefill }: { signal: AbortSignal; prefill?: string }) => {
    if (!rl) throw new Error('no terminal to ask on');
    const pending = questionOrClose(rl, question, signal);
    if (prefill) rl.write(prefill);
    const line = await pending;
    if (line === undefined) throw new Error('input closed while waiting for an answer');
    return line;
  };
  const approve = options.yes
    ? () => ({ type: 'allow' as const })
    : interactive
      ? terminalApprover({ ask, write: note, describe: options.describeApproval })
      : nonInteractiveApprover(options.nonInteractiveHint ?? 'rerun with --yes to allow it');
  const approval: ApprovalOptions = { ...options.policy, approve };

  const log = createToolLog({ write: note, color: stderr.isTTY === true });
  let history: AgentMessage[] = [];
  let running: AbortController | undefined;
  rl?.on('SIGINT', () => {
    if (running) running.abort(new Error('interrupted'));
    else rl?.close();
  });

  const turn = async (text: string): Promise<boolean> => {
    running = new AbortController();
    let streamed = '';
    const onEvent = (event: AgentEvent) => {
      if (stream && event.type === 'text_delta') {
        stdout.write(event.text);
        streamed += event.text;
        return;
      }
      if (stream && event.type === 'model_response') {
        // Models that do not stream deliver their text here in one piece.
        const shown = streamed || event.text;
        if (!streamed && event.text) stdout.write(event.text);
        if (shown && !shown.endsWith('\n')) stdout.write('\n');
        streamed = '';
      }
      log(event);
    };
    try {
      const result = await runAgent({
        client: options.client,
        model: options.model,
        system: options.system,
        messages: [...history, userMessage(text)],
        approval,
        maxSteps: options.maxSteps,
        onEvent,
        signal: running.signal,
      });
      history = result.messages;
      if (!stream) stdout.write(`${result.text}\n`);
      return true;
    } catch (error) {
      if (running.signal.aborted) note('(cancelled)\n');
      else note(`error: ${errorText(error)}\n`);
      return false;
    } finally {
      running = undefined;
    }
  };

  try {
    if (options.prompt !== undefined || !rl) return (await turn(options.prompt ?? '')) ? 0 : 1;
    if (!interactive) {
      for await (const line of rl) if (line.trim()) await turn(line);
      return 0;
    }
    note('Type a message; /reset starts over, /exit or Ctrl+D quits, Ctrl+C stops a running turn.\n');
    for (;;) {
      const line = await questionOrClose(rl, 'you> ');
      if (line === undefined || line.trim() === '/exit' || line.trim() === '/quit') return 0;
      if (line.trim() === '/reset') {
        history = [];
        note('(conversation cleared)\n');
        continue;
      }
      if (line.trim()) await turn(line);
    }
  } finally {
    rl?.close();
  }
}
