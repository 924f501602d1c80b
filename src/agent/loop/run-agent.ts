/**
 * The agent loop: send the conversation and tool definitions to the model; text is the answer, tool calls are
 * run and their results sent back, until the model answers or the step limit forces a final answer without tools.
 * A turn whose calls wait for approval pauses the run with a JSON state that `resumeAgent` continues
 * (docs/design/agent.md#resumable-runs).
 */
import { UtcpError, type JsonObject, type UtcpClient } from '../../index.js';
import type { AgentEvent, AgentEventListener } from './agent-events.js';
import { AgentToolSet, type ToolSelection } from './agent-tool-set.js';
import type { ApprovalDecision, ApprovalOptions } from './approval.js';
import type { ChatModel, ChatResponse, TokenUsage } from '../chat-model.js';
import { planToolCalls, runPlannedCalls, type PlannedCall, type ToolRunContext } from './execute-tool-calls.js';
import { assertNever, type AgentMessage, type ToolCall, type ToolResultMessage } from '../messages.js';
import { replanPausedTurn } from './resume-plan.js';
import { runAbortError, throwIfRunAborted } from './run-abort-error.js';
import { checkDecisions, checkState, signState, stateKeyBytes } from './run-state.js';
import { SEARCH_TOOLS_NAME } from './search-tools-tool.js';
import { DEFAULT_MAX_DESCRIPTION_CHARS } from '../export/tool-definitions.js';
import { ToolNameCodec } from '../export/tool-names.js';
import type { Trace } from '../../internal.js';
import {
  chatRetryEvent,
  endChatTrace,
  endRunTrace,
  openChatTrace,
  openRunTrace,
  type AgentTracing,
} from './agent-tracing.js';

/** The part of the client the loop uses. */
export type AgentClient = Pick<UtcpClient, 'getTools' | 'searchTools' | 'callTool'>;

export const DEFAULT_MAX_STEPS = 16;
export const DEFAULT_MAX_TOOLS_INLINE = 40;
export const DEFAULT_TOOL_CONCURRENCY = 4;
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 20_000;

/** The settings of a run that a paused state keeps (everything but the client, the model and callbacks). */
interface RunSettings {
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
}

export interface RunAgentOptions extends RunSettings {
  client: AgentClient;
  model: ChatModel;
  /** The conversation so far; usually `[userMessage('…')]`. Not modified. */
  messages: readonly AgentMessage[];
  /** System prompt. */
  system?: string;
  /** Which calls need approval, and who approves them. @default every call runs */
  approval?: ApprovalOptions;
  /**
   * Code mode: the name of a registered code-mode tool (`code_mode.run`, see `utcp-kit/code-mode`). The model is
   * offered only it and `search_tools`, whose results are then the TypeScript declarations of the tools found
   * (from the manual's `describe` tool); the script's calls go through `approval` like direct calls. Like
   * `approval`, it is not kept in a paused state: pass it again to `resumeAgent` (docs/design/code-mode.md#agent).
   */
  codeModeTool?: string;
  onEvent?: AgentEventListener;
  /** Stops the run and any approval, tool call, model request or retry wait in flight; the run rejects with UtcpAbortError (or the signal's UtcpError reason). */
  signal?: AbortSignal;
  /**
   * A secret (at least 16 bytes) to sign a paused state with (HMAC-SHA-256, `state.mac`). Pass the same key to
   * `resumeAgent`, which then refuses a state that was changed (docs/design/agent.md#resume-checks).
   * @default unsigned: the resumed run re-checks every call, but cannot tell an approval given before the pause from a forged one
   */
  stateKey?: string | Uint8Array;
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

/** A call the paused run waits on. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: JsonObject;
  /**
   * `no_approver`: the policy said `ask` and no `approve` callback was given; `deferred`: the callback answered
   * `defer`; `unverified`: an unsigned state said the call was already approved (or edited), which a resume cannot
   * take on trust.
   */
  reason: 'no_approver' | 'deferred' | 'unverified';
}

/**
 * A paused run, as plain JSON: store it anywhere and hand it to `resumeAgent` later, in any process.
 * Treat it as opaque; `version` changes when its shape does.
 */
export interface AgentRunState {
  version: 1;
  settings: Omit<RunSettings, 'tools'> & { tools?: string[] };
  messages: AgentMessage[];
  steps: AgentStep[];
  usage: TokenUsage;
  /** The paused turn and its planned calls (nothing of it has run). */
  step: number;
  turn: { text: string; toolCalls: ToolCall[]; usage?: TokenUsage; finishReason?: string };
  planned: PlannedCall[];
  /** Tools found by `search_tools` so far. */
  loadedTools: string[];
  /** HMAC-SHA-256 of the rest (canonical JSON), hex, when the run had a `stateKey`. */
  mac?: string;
}

export interface AgentResult {
  /** `paused` when calls wait for approval: see `pendingApprovals` and `state`. */
  status: 'completed' | 'paused';
  /** The final answer (empty while paused). */
  text: string;
  /** The whole conversation: the input messages and everything the run added. */
  messages: AgentMessage[];
  steps: AgentStep[];
  /** True when the step limit was hit and the answer came from the extra turn without tools. */
  stepLimitReached: boolean;
  /** Tokens summed over every turn that reported usage. */
  usage: TokenUsage;
  /** The calls waiting for a decision (paused runs only). */
  pendingApprovals?: PendingApproval[];
  /** JSON state to pass to `resumeAgent` (paused runs only). */
  state?: AgentRunState;
}

interface Run {
  options: RunAgentOptions;
  stateKey?: Uint8Array;
  settings: RunSettings;
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
  /** The run's tracing (docs/design/observability.md#agent-spans). */
  tracer?: AgentTracing;
  trace?: Trace;
}

/** How a run is traced: the helpers and its `invoke_agent` span, when someone listens. */
interface RunTracing {
  tracer: AgentTracing;
  trace?: Trace;
}

function checkCount(name: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min)
    throw new UtcpError('INVALID_CONFIG', `runAgent: ${name} must be an integer >= ${min}, got ${value}`);
  return v;
}

async function startRun(
  options: RunAgentOptions,
  signal: AbortSignal,
  traced: RunTracing,
  from?: AgentRunState,
): Promise<Run> {
  const names = new ToolNameCodec({ maxLength: options.model.maxToolNameLength, reserved: [SEARCH_TOOLS_NAME] });
  const run: Omit<Run, 'tools'> = {
    options,
    stateKey: stateKeyBytes(options.stateKey, from ? 'resumeAgent' : 'runAgent'),
    settings: options,
    model: options.model,
    maxSteps: checkCount('maxSteps', options.maxSteps, DEFAULT_MAX_STEPS, 0),
    concurrency: checkCount('toolConcurrency', options.toolConcurrency, DEFAULT_TOOL_CONCURRENCY, 1),
    maxOutputChars: checkCount('maxToolOutputChars', options.maxToolOutputChars, DEFAULT_MAX_TOOL_OUTPUT_CHARS, 1),
    names,
    messages: [...(from?.messages ?? options.messages)],
    steps: [...(from?.steps ?? [])],
    usage: from ? { ...from.usage } : { inputTokens: 0, outputTokens: 0 },
    signal,
    emit: (event: AgentEvent) => options.onEvent?.(event),
    tracer: traced.tracer,
    trace: traced.trace,
  };
  const tools = await AgentToolSet.create(options.client, {
    selection: options.tools,
    ...(options.codeModeTool !== undefined ? { codeModeTool: options.codeModeTool } : {}),
    inlineLimit: checkCount('maxToolsInline', options.maxToolsInline, DEFAULT_MAX_TOOLS_INLINE, 0),
    names,
    maxDescriptionChars: checkCount(
      'maxToolDescriptionChars',
      options.maxToolDescriptionChars,
      DEFAULT_MAX_DESCRIPTION_CHARS,
      1,
    ),
  });
  if (from) tools.restoreLoaded(from.loadedTools);
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

function addUsage(total: TokenUsage, add: TokenUsage | undefined): TokenUsage {
  if (!add) return total;
  const sum = (a?: number, b?: number) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  const out: TokenUsage = {
    inputTokens: total.inputTokens + add.inputTokens,
    outputTokens: total.outputTokens + add.outputTokens,
  };
  for (const key of ['cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const v = sum(total[key], add[key]);
    if (v !== undefined) out[key] = v;
  }
  return out;
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
  const chat = await openChatTrace(run.tracer, run.trace, run.model, step);
  const started = performance.now();
  let response: ChatResponse;
  const generate = () =>
    run.model.generate(
      {
        ...(run.settings.system ? { system: run.settings.system } : {}),
        messages: encodeMessages(run.messages, run.tools),
        tools,
        toolChoice,
      },
      {
        signal: run.signal,
        onTextDelta: (text) => run.emit({ type: 'text_delta', step, text }),
        onRetry: (info) => {
          chatRetryEvent(chat, info);
          run.emit({ type: 'model_retry', step, provider: run.model.provider, ...info });
        },
      },
    );
  try {
    response = await (chat ? chat.run(generate) : generate());
    endChatTrace(chat, response);
  } catch (error) {
    chat?.set({ 'utcp.outcome': 'error' }, { outcome: 'error' });
    chat?.fail(run.signal.aborted ? runAbortError(run.signal) : error);
    if (run.signal.aborted) throw runAbortError(run.signal);
    run.emit({ type: 'error', step, phase: 'model', error });
    throw error;
  } finally {
    chat?.end();
  }
  run.usage = addUsage(run.usage, response.usage);
  const toolCalls =
    toolChoice === 'auto' ? response.toolCalls.map((c) => ({ ...c, name: run.tools.clientName(c.name) })) : [];
  run.emit({
    type: 'model_response',
    step,
    text: response.text,
    toolCalls,
    usage: response.usage,
    finishReason: response.finishReason,
    durationMs: performance.now() - started,
  });
  return { ...response, toolCalls };
}

function toolContext(run: Run, step: number): ToolRunContext {
  return {
    client: run.options.client,
    model: run.model,
    tools: run.tools,
    names: run.names,
    approval: run.options.approval,
    concurrency: run.concurrency,
    maxOutputChars: run.maxOutputChars,
    toolTimeoutMs: run.settings.toolTimeoutMs,
    signal: run.signal,
    step,
    emit: run.emit,
    traceContext: run.trace?.context,
  };
}

function settingsOf(run: Run): AgentRunState['settings'] {
  const s = run.settings;
  if (typeof s.tools === 'function')
    throw new UtcpError(
      'INVALID_CONFIG',
      'runAgent: a run with a `tools` predicate cannot pause; pass names or globs to make it resumable',
    );
  const out: AgentRunState['settings'] = {};
  for (const key of [
    'system',
    'maxSteps',
    'maxToolsInline',
    'toolConcurrency',
    'maxToolOutputChars',
    'maxToolDescriptionChars',
    'toolTimeoutMs',
  ] as const) {
    if (s[key] !== undefined) (out as Record<string, unknown>)[key] = s[key];
  }
  if (s.tools) out.tools = [...s.tools];
  return out;
}

function paused(run: Run, step: number, response: ChatResponse, planned: PlannedCall[]): AgentResult {
  const pending = planned.filter((p): p is Extract<PlannedCall, { kind: 'pending' }> => p.kind === 'pending');
  const pendingApprovals = pending.map((p) => ({
    toolCallId: p.call.id,
    toolName: p.toolName,
    args: p.args,
    reason: p.reason,
  }));
  const unsigned: AgentRunState = JSON.parse(
    JSON.stringify({
      version: 1,
      settings: settingsOf(run),
      messages: run.messages,
      steps: run.steps,
      usage: run.usage,
      step,
      turn: {
        text: response.text,
        toolCalls: response.toolCalls,
        usage: response.usage,
        finishReason: response.finishReason,
      },
      planned,
      loadedTools: run.tools.loadedNames(),
    } satisfies AgentRunState),
  );
  const state = run.stateKey ? signState(unsigned, run.stateKey) : unsigned;
  run.emit({
    type: 'paused',
    step,
    pending: pendingApprovals.map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args })),
  });
  return {
    status: 'paused',
    text: '',
    messages: run.messages,
    steps: run.steps,
    stepLimitReached: false,
    usage: run.usage,
    pendingApprovals,
    state,
  };
}

/** Runs a planned turn, or pauses when calls still wait for a decision. */
async function finishToolStep(
  run: Run,
  step: number,
  response: ChatResponse,
  planned: PlannedCall[],
): Promise<AgentResult | undefined> {
  if (planned.some((p) => p.kind === 'pending')) return paused(run, step, response, planned);
  const toolResults = await runPlannedCalls(planned, toolContext(run, step));
  run.messages.push(...toolResults);
  run.steps.push({
    step,
    text: response.text,
    toolCalls: response.toolCalls,
    toolResults,
    usage: response.usage,
    finishReason: response.finishReason,
  });
  return undefined;
}

function finishRun(run: Run, step: number, response: ChatResponse, stepLimitReached: boolean): AgentResult {
  run.messages.push({
    type: 'assistant',
    text: response.text,
    ...(response.providerData ? { providerData: response.providerData } : {}),
  });
  run.steps.push({
    step,
    text: response.text,
    toolCalls: [],
    toolResults: [],
    usage: response.usage,
    finishReason: response.finishReason,
  });
  return {
    status: 'completed',
    text: response.text,
    messages: run.messages,
    steps: run.steps,
    stepLimitReached,
    usage: run.usage,
  };
}

async function loop(run: Run, firstStep: number): Promise<AgentResult> {
  for (let step = firstStep; step <= run.maxSteps; step++) {
    const response = await askModel(run, step, 'auto');
    if (response.toolCalls.length === 0) return finishRun(run, step, response, false);
    run.messages.push({
      type: 'tool_calls',
      text: response.text,
      calls: response.toolCalls,
      ...(response.providerData ? { providerData: response.providerData } : {}),
    });
    const planned = await planToolCalls(response.toolCalls, toolContext(run, step));
    const pause = await finishToolStep(run, step, response, planned);
    if (pause) return pause;
  }
  run.emit({ type: 'step_limit_reached', step: run.maxSteps + 1, maxSteps: run.maxSteps });
  return finishRun(run, run.maxSteps + 1, await askModel(run, run.maxSteps + 1, 'none'), true);
}

/**
 * Runs `body` with a signal that also stops work still in flight when the run ends early, inside the run's
 * `invoke_agent` span when someone traces (docs/design/observability.md#agent-spans).
 */
async function withRunSignal(
  outer: AbortSignal | undefined,
  model: ChatModel,
  resumed: boolean,
  body: (signal: AbortSignal, traced: RunTracing) => Promise<AgentResult>,
): Promise<AgentResult> {
  // The deadline helper links the caller's signal (docs/design/http-exchange.md#deadlines); `utcp-kit/internal` is
  // imported here, not at module load, so importing the agent entry stays cheap.
  const internal = await import('../../internal.js');
  const run = internal.createDeadline(outer, undefined, 'agent run');
  const trace = await openRunTrace(internal, model, resumed);
  try {
    throwIfRunAborted(run.signal);
    const traced = { tracer: internal, trace };
    const result = await (trace ? trace.run(() => body(run.signal, traced)) : body(run.signal, traced));
    endRunTrace(trace, result);
    return result;
  } catch (error) {
    trace?.set({ 'utcp.outcome': 'error' }, { outcome: 'error' });
    trace?.fail(error);
    throw error;
  } finally {
    run.abort(new UtcpError('ABORTED', 'The agent run ended'));
    trace?.end();
  }
}

/**
 * Runs the agent loop until the model answers with text, or `maxSteps` tool turns have passed (then one turn
 * without tools produces the answer and `stepLimitReached` is true). Malformed arguments, unknown tools,
 * invalid arguments, denials and failing tools go back to the model as tool results. When calls need approval
 * and no approver is given (or it answers `defer`), the run returns `status: "paused"` with a JSON `state`.
 * @throws UtcpAbortError / UtcpTimeoutError when `signal` aborts; the model's error (e.g. ModelApiError) when a model request fails.
 */
export function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  return withRunSignal(options.signal, options.model, false, async (signal, traced) =>
    loop(await startRun(options, signal, traced), 1),
  );
}

/** Decisions for a paused run's calls, by tool call id. */
export type ApprovalDecisions = Record<string, ApprovalDecision>;

/**
 * What `resumeAgent` needs besides the state: a client and a model (new ones are fine), and the run's policy:
 * `approval` and `tools` are never taken from the state, so pass them again. Settings given here override the
 * state's.
 */
export type ResumeAgentOptions = Omit<RunAgentOptions, 'messages'>;

/** The limits an unsigned state may only tighten (docs/design/agent.md#resume-checks). */
const STATE_LIMITS = {
  maxSteps: DEFAULT_MAX_STEPS,
  maxToolsInline: DEFAULT_MAX_TOOLS_INLINE,
  toolConcurrency: DEFAULT_TOOL_CONCURRENCY,
  maxToolOutputChars: DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  maxToolDescriptionChars: DEFAULT_MAX_DESCRIPTION_CHARS,
} as const;

/**
 * The resumed run's settings: the resumer's options first. From the state: the system prompt and the tool names
 * (a list that can only narrow a run that passes none); its limits as they are when the MAC verified, otherwise
 * never looser than the defaults; its tool timeout only when signed.
 */
function resumedSettings(state: AgentRunState['settings'], options: ResumeAgentOptions, signed: boolean): RunSettings {
  const out: RunSettings = {};
  const system = options.system ?? state.system;
  if (system !== undefined) out.system = system;
  const tools = options.tools ?? state.tools;
  if (tools !== undefined) out.tools = tools;
  for (const [key, limit] of Object.entries(STATE_LIMITS) as Array<[keyof typeof STATE_LIMITS, number]>) {
    const fromState = state[key] === undefined ? undefined : signed ? state[key] : Math.min(state[key], limit);
    const value = options[key] ?? fromState;
    if (value !== undefined) out[key] = value;
  }
  const timeout = options.toolTimeoutMs ?? (signed ? state.toolTimeoutMs : undefined);
  if (timeout !== undefined) out.toolTimeoutMs = timeout;
  return out;
}

/**
 * Continues a paused run: re-checks the turn's calls against the tools and `approval` policy of this resume as a
 * fresh call would be checked, applies `decisions` to the calls that wait for one, runs the turn's calls (each
 * exactly once per resume) and carries on with the loop. Works in another process with a new client and model.
 * Calls without a decision keep the run paused. Resume one state once: a second resume would run its calls again.
 * @throws AgentStateError (INVALID_CONFIG) for a state of the wrong shape, inconsistent, or whose MAC does not verify
 * under `stateKey`; UtcpError INVALID_CONFIG for a decision of the wrong shape or for an id that waits for none.
 */
export function resumeAgent(
  state: AgentRunState,
  decisions: ApprovalDecisions,
  options: ResumeAgentOptions,
): Promise<AgentResult> {
  return withRunSignal(options.signal, options.model, true, async (signal, traced) => {
    const key = stateKeyBytes(options.stateKey, 'resumeAgent');
    const { state: s, signed } = checkState<AgentRunState>(state, key);
    const checked = checkDecisions(decisions);
    const runOptions: RunAgentOptions = {
      ...options,
      ...resumedSettings(s.settings, options, signed),
      messages: s.messages,
    };
    const run = await startRun(runOptions, signal, traced, s);
    const planned = await replanPausedTurn(s.planned, checked, toolContext(run, s.step), signed);
    const pause = await finishToolStep(run, s.step, { ...s.turn }, planned);
    if (pause) return pause;
    return loop(run, s.step + 1);
  });
}
