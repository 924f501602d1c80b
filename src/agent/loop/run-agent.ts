/**
 * The agent loop: send the conversation and tool definitions to the model; text is the answer, tool calls are
 * run and their results sent back, until the model answers or the step limit forces a final answer without tools.
 */
import { UtcpError, type UtcpClient } from '../../index.js';
import type { AgentEvent, AgentEventListener } from './agent-events.js';
import { AgentToolSet, type ToolSelection } from './agent-tool-set.js';
import type { ApprovalOptions } from './approval.js';
import type { ChatModel, ChatResponse, TokenUsage } from '../chat-model.js';
import { executeToolCalls } from './execute-tool-calls.js';
import { assertNever, type AgentMessage, type ToolCall, type ToolResultMessage } from '../messages.js';
import { runAbortError, throwIfRunAborted } from './run-abort-error.js';
import { SEARCH_TOOLS_NAME } from './search-tools-tool.js';
import { DEFAULT_MAX_DESCRIPTION_CHARS } from '../export/tool-definitions.js';
import { ToolNameCodec } from '../export/tool-names.js';

/** The part of the client the loop uses. */
export type AgentClient = Pick<UtcpClient, 'getTools' | 'searchTools' | 'callTool'>;

export const DEFAULT_MAX_STEPS = 16;
export const DEFAULT_MAX_TOOLS_INLINE = 40;
export const DEFAULT_TOOL_CONCURRENCY = 4;
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 20_000;

export interface RunAgentOptions {
  client: AgentClient;
  model: ChatModel;
  /** The conversation so far; usually `[userMessage('…')]`. Not modified. */
  messages: readonly AgentMessage[];
  /** System prompt. */
  system?: string;
  /** Restricts the tools offered: names or globs (`github.*`), or a predicate. @default every registered tool */
  tools?: ToolSelection;
  /** Model turns that may request tools; then one more turn without tools produces the answer. @default 16 */
  maxSteps?: number;
  /** Past this many tools, the model gets `search_tools` and the tools it finds (capped at 127). @default 40 */
  maxToolsInline?: number;
  /** Tool calls of one turn run at most this many at a time. @default 4 */
  toolConcurrency?: number;
  /** Longer tool results are cut to this many characters, head and tail kept. @default 20_000 */
  maxToolOutputChars?: number;
  /** Longest tool description sent, in characters. @default 1024 */
  maxToolDescriptionChars?: number;
  /** Deadline per tool call, in milliseconds. @default the client's */
  toolTimeoutMs?: number;
  /** Which calls need approval, and who approves them. @default every call runs */
  approval?: ApprovalOptions;
  onEvent?: AgentEventListener;
  /** Stops the run and any tool or model request in flight; the run rejects with UtcpAbortError (or the signal's UtcpError reason). */
  signal?: AbortSignal;
}

/** One model turn and the tool calls it made. */
export interface AgentStep {
  step: number;
  text: string;
  toolCalls: ToolCall[];
  toolResults: ToolResultMessage[];
  usage?: TokenUsage;
  finishReason?: string;
}

export interface AgentResult {
  /** The final answer. */
  text: string;
  /** The whole conversation: the input messages and everything the run added. */
  messages: AgentMessage[];
  steps: AgentStep[];
  /** True when the step limit was hit and the answer came from the extra turn without tools. */
  stepLimitReached: boolean;
  /** Tokens summed over every turn that reported usage. */
  usage: TokenUsage;
}

interface Run {
  options: RunAgentOptions;
  model: ChatModel;
  maxSteps: number;
  concurrency: number;
  maxOutputChars: number;
  names: ToolNameCodec;
  tools: AgentToolSet;
  messages: AgentMessage[];
  steps: AgentStep[];
  usage: TokenUsage;
  signal: AbortSignal;
  emit: AgentEventListener;
}

function checkCount(name: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new UtcpError('INVALID_CONFIG', `runAgent: ${name} must be an integer >= ${min}, got ${value}`);
  return v;
}

async function startRun(options: RunAgentOptions, signal: AbortSignal): Promise<Run> {
  const names = new ToolNameCodec({ maxLength: options.model.maxToolNameLength, reserved: [SEARCH_TOOLS_NAME] });
  const run: Omit<Run, 'tools'> = {
    options,
    model: options.model,
    maxSteps: checkCount('maxSteps', options.maxSteps, DEFAULT_MAX_STEPS, 0),
    concurrency: checkCount('toolConcurrency', options.toolConcurrency, DEFAULT_TOOL_CONCURRENCY, 1),
    maxOutputChars: checkCount('maxToolOutputChars', options.maxToolOutputChars, DEFAULT_MAX_TOOL_OUTPUT_CHARS, 1),
    names,
    messages: [...options.messages],
    steps: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    signal,
    emit: (event: AgentEvent) => options.onEvent?.(event),
  };
  const tools = await AgentToolSet.create(options.client, {
    selection: options.tools,
    inlineLimit: checkCount('maxToolsInline', options.maxToolsInline, DEFAULT_MAX_TOOLS_INLINE, 0),
    names,
    maxDescriptionChars: checkCount('maxToolDescriptionChars', options.maxToolDescriptionChars, DEFAULT_MAX_DESCRIPTION_CHARS, 1),
  });
  return { ...run, tools };
}

/** The conversation with client tool names replaced by the names the model knows. */
function encodeMessages(messages: readonly AgentMessage[], tools: AgentToolSet): AgentMessage[] {
  return messages.map((m): AgentMessage => {
    switch (m.type) {
      case 'user':
      case 'assistant':
        return m;
      case 'tool_calls':
        return { ...m, calls: m.calls.map((c) => ({ ...c, name: tools.modelName(c.name) })) };
      case 'tool_result':
        return { ...m, toolName: tools.modelName(m.toolName) };
      default:
        return assertNever(m);
    }
  });
}

async function askModel(run: Run, step: number, toolChoice: 'auto' | 'none'): Promise<ChatResponse> {
  throwIfRunAborted(run.signal);
  const tools = run.tools.definitions();
  run.emit({
    type: 'model_request',
    step,
    provider: run.model.provider,
    model: run.model.modelId,
    messageCount: run.messages.length,
    toolNames: tools.map((t) => (t.name === SEARCH_TOOLS_NAME ? t.name : (run.names.decode(t.name) ?? t.name))),
    toolChoice,
  });
  const started = performance.now();
  let response: ChatResponse;
  try {
    response = await run.model.generate(
      { ...(run.options.system ? { system: run.options.system } : {}), messages: encodeMessages(run.messages, run.tools), tools, toolChoice },
      { signal: run.signal, onTextDelta: (text) => run.emit({ type: 'text_delta', step, text }) },
    );
  } catch (error) {
    if (run.signal.aborted) throw runAbortError(run.signal);
    run.emit({ type: 'error', step, phase: 'model', error });
    throw error;
  }
  if (response.usage) run.usage = { inputTokens: run.usage.inputTokens + response.usage.inputTokens, outputTokens: run.usage.outputTokens + response.usage.outputTokens };
  const toolCalls = toolChoice === 'auto' ? response.toolCalls.map((c) => ({ ...c, name: run.tools.clientName(c.name) })) : [];
  run.emit({ type: 'model_response', step, text: response.text, toolCalls, usage: response.usage, finishReason: response.finishReason, durationMs: performance.now() - started });
  return { ...response, toolCalls };
}

async function runToolStep(run: Run, step: number, response: ChatResponse): Promise<void> {
  run.messages.push({ type: 'tool_calls', text: response.text, calls: response.toolCalls });
  const toolResults = await executeToolCalls(response.toolCalls, {
    client: run.options.client,
    model: run.model,
    tools: run.tools,
    names: run.names,
    approval: run.options.approval,
    concurrency: run.concurrency,
    maxOutputChars: run.maxOutputChars,
    toolTimeoutMs: run.options.toolTimeoutMs,
    signal: run.signal,
    step,
    emit: run.emit,
  });
  run.messages.push(...toolResults);
  run.steps.push({ step, text: response.text, toolCalls: response.toolCalls, toolResults, usage: response.usage, finishReason: response.finishReason });
}

function finishRun(run: Run, step: number, response: ChatResponse, stepLimitReached: boolean): AgentResult {
  run.messages.push({ type: 'assistant', text: response.text });
  run.steps.push({ step, text: response.text, toolCalls: [], toolResults: [], usage: response.usage, finishReason: response.finishReason });
  return { text: response.text, messages: run.messages, steps: run.steps, stepLimitReached, usage: run.usage };
}

/**
 * Runs the agent loop until the model answers with text, or `maxSteps` tool turns have passed (then one turn
 * without tools produces the answer and `stepLimitReached` is true). Malformed arguments, unknown tools,
 * invalid arguments, denials and failing tools go back to the model as tool results.
 * @throws UtcpAbortError / UtcpTimeoutError when `signal` aborts; the model's error (e.g. ModelApiError) when a model request fails.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  // Our own controller also cancels tools still in flight when the run ends early (a listener or approver threw).
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  try {
    throwIfRunAborted(signal);
    const run = await startRun(options, signal);
    for (let step = 1; step <= run.maxSteps; step++) {
      const response = await askModel(run, step, 'auto');
      if (response.toolCalls.length === 0) return finishRun(run, step, response, false);
      await runToolStep(run, step, response);
    }
    run.emit({ type: 'step_limit_reached', step: run.maxSteps + 1, maxSteps: run.maxSteps });
    return finishRun(run, run.maxSteps + 1, await askModel(run, run.maxSteps + 1, 'none'), true);
  } finally {
    stop.abort(new UtcpError('ABORTED', 'The agent run ended'));
  }
}
