import {
  ToolNotFoundError,
  UtcpArgumentsError,
  UtcpError,
  type JsonObject,
  type Tool,
  type UtcpClient,
} from '../../index.js';
import type { AgentEventListener } from './agent-events.js';
import type { AgentToolSet } from './agent-tool-set.js';
import { approvalActionFor, type ApprovalDecision, type ApprovalOptions } from './approval.js';
import type { ChatModel } from '../chat-model.js';
import { describeToolError } from './describe-tool-error.js';
import { mapConcurrent } from './map-concurrent.js';
import type { MediaContent, ToolCall, ToolResultMessage } from '../messages.js';
import { parseToolArguments } from './parse-tool-arguments.js';
import { runAbortError, throwIfRunAborted, untilAborted } from './run-abort-error.js';
import { SEARCH_TOOLS_NAME, parseSearchArguments, searchResultText } from './search-tools-tool.js';
import type { ToolNameCodec } from '../export/tool-names.js';
import { nestedCallGate } from './nested-call-gate.js';
import { toolOutputParts } from './tool-output-text.js';
import { truncateOutput } from './truncate-output.js';

/** @internal Everything one turn's tool calls need. */
export interface ToolRunContext {
  client: Pick<UtcpClient, 'callTool' | 'searchTools'>;
  model: ChatModel;
  tools: AgentToolSet;
  names: ToolNameCodec;
  approval?: ApprovalOptions;
  concurrency: number;
  maxOutputChars: number;
  toolTimeoutMs?: number;
  signal: AbortSignal;
  step: number;
  emit: AgentEventListener;
  /** The run's span context: parents each tool call's span (docs/design/observability.md#agent-spans). */
  traceContext?: unknown;
}

/**
 * @internal One call of a turn after parsing, lookup and approval; JSON-serialisable (a paused run stores
 * its turn's plan). `pending` calls wait for a decision; nothing of the turn runs while one does.
 */
export type PlannedCall =
  | { kind: 'result'; message: ToolResultMessage }
  | { kind: 'search'; call: ToolCall; args: JsonObject; query: string; limit: number }
  | { kind: 'call'; call: ToolCall; toolName: string; args: JsonObject; note: string }
  | { kind: 'pending'; call: ToolCall; toolName: string; args: JsonObject; reason: PendingReason };

/** Why a call waits: see `PendingApproval.reason`. */
export type PendingReason = 'no_approver' | 'deferred' | 'unverified';

const MAX_LISTED_TOOLS = 40;

function resultMessage(call: ToolCall, content: string, isError: boolean, ctx: ToolRunContext): ToolResultMessage {
  return {
    type: 'tool_result',
    toolCallId: call.id,
    toolName: call.name,
    content: truncateOutput(content, ctx.maxOutputChars).text,
    isError,
  };
}

function failure(call: ToolCall, content: string, error: unknown, ctx: ToolRunContext): PlannedCall {
  ctx.emit({ type: 'error', step: ctx.step, phase: 'tool_call', toolCallId: call.id, toolName: call.name, error });
  return { kind: 'result', message: resultMessage(call, content, true, ctx) };
}

function unknownToolText(call: ToolCall, ctx: ToolRunContext): string {
  if (ctx.tools.deferred)
    return `Error: unknown tool "${call.name}". Call ${SEARCH_TOOLS_NAME} to find tools, then call them by the names it returns.`;
  const names = ctx.tools.definitions().map((d) => d.name);
  const listed = names.slice(0, MAX_LISTED_TOOLS).join(', ') + (names.length > MAX_LISTED_TOOLS ? ', …' : '');
  return `Error: unknown tool "${call.name}". Available tools: ${listed || '(none)'}.`;
}

/** @internal Checks the shape of a decision from an approver or from `resumeAgent`'s caller. */
export function checkDecision(decision: ApprovalDecision, where = 'approve()'): ApprovalDecision {
  const ok =
    decision?.type === 'allow' ||
    decision?.type === 'deny' ||
    decision?.type === 'defer' ||
    (decision?.type === 'edit' &&
      typeof decision.args === 'object' &&
      decision.args !== null &&
      !Array.isArray(decision.args));
  if (!ok)
    throw new UtcpError(
      'INVALID_CONFIG',
      `${where} must return { type: "allow" }, { type: "deny", reason? }, { type: "edit", args: {...} } or { type: "defer" }`,
    );
  return decision;
}

type Decided = ApprovalDecision | { type: 'pending'; reason: 'no_approver' | 'deferred' };

async function decideApproval(call: ToolCall, tool: Tool, args: JsonObject, ctx: ToolRunContext): Promise<Decided> {
  if (!ctx.approval) return { type: 'allow' };
  const { action, rule } = approvalActionFor(tool, ctx.approval);
  if (action === 'allow') return { type: 'allow' };
  const base = { type: 'approval', step: ctx.step, toolCallId: call.id, toolName: tool.name } as const;
  if (action === 'deny') {
    const reason = rule?.reason ?? 'the policy does not allow this tool';
    ctx.emit({ ...base, decision: 'deny', by: 'policy', reason });
    return { type: 'deny', reason };
  }
  if (!ctx.approval.approve) return { type: 'pending', reason: 'no_approver' };
  const approve = ctx.approval.approve;
  // The approver gets the run's signal, and the run does not wait for an approver that ignores it.
  const decision = checkDecision(
    await untilAborted(
      Promise.resolve().then(() =>
        approve(
          { toolCallId: call.id, toolName: tool.name, args, tool, ...(rule ? { rule } : {}) },
          { signal: ctx.signal },
        ),
      ),
      ctx.signal,
    ),
  );
  throwIfRunAborted(ctx.signal);
  if (decision.type === 'defer') return { type: 'pending', reason: 'deferred' };
  ctx.emit({
    ...base,
    decision: decision.type,
    by: 'approver',
    ...(decision.type === 'deny' && decision.reason ? { reason: decision.reason } : {}),
  });
  return decision;
}

/** @internal Turns a decision for a pending call into what runs (or the denial the model reads). */
export function applyDecision(
  p: Extract<PlannedCall, { kind: 'pending' }>,
  decision: ApprovalDecision,
  ctx: ToolRunContext,
): PlannedCall {
  const modelName = ctx.tools.modelName(p.call.name);
  if (decision.type === 'deny') {
    const content = `Denied: the call to ${modelName} was not approved${decision.reason ? `: ${decision.reason}` : ''}. Do not retry it unchanged.`;
    return { kind: 'result', message: resultMessage(p.call, content, true, ctx) };
  }
  if (decision.type === 'edit') {
    return {
      kind: 'call',
      call: p.call,
      toolName: p.toolName,
      args: decision.args,
      note: `[The user changed the arguments to ${JSON.stringify(decision.args)}]\n`,
    };
  }
  if (decision.type === 'defer') return p;
  return { kind: 'call', call: p.call, toolName: p.toolName, args: p.args, note: '' };
}

/** Parses, checks and approves one call, in model order; the calls themselves run afterwards. */
async function planCall(call: ToolCall, ctx: ToolRunContext): Promise<PlannedCall> {
  const modelName = ctx.tools.modelName(call.name);
  if (ctx.tools.isSearchTool(call.name)) {
    const parsed = parseToolArguments(call.arguments);
    const search = 'error' in parsed ? parsed : parseSearchArguments(parsed.args);
    if ('error' in search)
      return failure(
        call,
        `Error: ${SEARCH_TOOLS_NAME}: ${search.error}`,
        new UtcpArgumentsError(SEARCH_TOOLS_NAME, [{ path: '(arguments)', message: search.error }]),
        ctx,
      );
    return { kind: 'search', call, args: (parsed as { args: JsonObject }).args, ...search };
  }
  const tool = ctx.tools.resolve(call.name);
  if (!tool) return failure(call, unknownToolText(call, ctx), new ToolNotFoundError(call.name), ctx);
  const parsed = parseToolArguments(call.arguments);
  if ('error' in parsed)
    return failure(
      call,
      `Error: ${modelName}: ${parsed.error}`,
      new UtcpArgumentsError(tool.name, [{ path: '(arguments)', message: parsed.error }]),
      ctx,
    );
  const args = ctx.model.prepareArguments ? ctx.model.prepareArguments(parsed.args, tool.inputs) : parsed.args;
  const decision = await decideApproval(call, tool, args, ctx);
  if (decision.type === 'pending') return { kind: 'pending', call, toolName: tool.name, args, reason: decision.reason };
  return applyDecision({ kind: 'pending', call, toolName: tool.name, args, reason: 'deferred' }, decision, ctx);
}

interface Outcome {
  content: string;
  isError: boolean;
  media?: MediaContent[];
}

async function runSearch(planned: Extract<PlannedCall, { kind: 'search' }>, ctx: ToolRunContext): Promise<Outcome> {
  try {
    const found = await ctx.tools.search(ctx.client, planned.query, planned.limit);
    ctx.emit({ type: 'tools_loaded', step: ctx.step, query: planned.query, toolNames: found.map((t) => t.name) });
    const codeMode = ctx.tools.codeModeTool;
    if (codeMode) return { content: await codeModeSearchText(codeMode, found, ctx), isError: false };
    return { content: searchResultText(found, ctx.names), isError: false };
  } catch (error) {
    if (ctx.signal.aborted) throw runAbortError(ctx.signal);
    ctx.emit({
      type: 'error',
      step: ctx.step,
      phase: 'tool_call',
      toolCallId: planned.call.id,
      toolName: SEARCH_TOOLS_NAME,
      error,
    });
    return { content: describeToolError(error, SEARCH_TOOLS_NAME), isError: true };
  }
}

/**
 * In code mode, what a search returns: the declarations of the tools found from the code-mode manual's `describe`
 * tool, or the plain result list when the manual has none (docs/design/code-mode.md#agent).
 */
async function codeModeSearchText(codeMode: Tool, found: readonly Tool[], ctx: ToolRunContext): Promise<string> {
  const visible = found.filter((t) => t.name !== codeMode.name);
  if (visible.length === 0) return searchResultText([], ctx.names);
  const describe = `${codeMode.name.slice(0, codeMode.name.lastIndexOf('.'))}.describe`;
  try {
    const text = await ctx.client.callTool(describe, { tools: visible.map((t) => t.name) }, { signal: ctx.signal });
    if (typeof text === 'string') return text;
  } catch {
    if (ctx.signal.aborted) throw runAbortError(ctx.signal);
  }
  return searchResultText(visible, ctx.names);
}

/** A plan result (`{ type: 'plan', steps: [{ step, status }] }`), or undefined (docs/design/agent.md#plan-events). */
function planOf(value: unknown): { steps: Array<{ step: string; status: string }>; explanation?: string } | undefined {
  const v = value as { type?: unknown; steps?: unknown; explanation?: unknown } | null;
  if (!v || typeof v !== 'object' || v.type !== 'plan' || !Array.isArray(v.steps)) return undefined;
  const steps: Array<{ step: string; status: string }> = [];
  for (const s of v.steps.slice(0, 100)) {
    const x = s as { step?: unknown; status?: unknown } | null;
    if (typeof x?.step !== 'string' || typeof x.status !== 'string') return undefined;
    steps.push({ step: x.step, status: x.status });
  }
  return typeof v.explanation === 'string' ? { steps, explanation: v.explanation } : { steps };
}

async function runTool(planned: Extract<PlannedCall, { kind: 'call' }>, ctx: ToolRunContext): Promise<Outcome> {
  const { call, toolName, args } = planned;
  try {
    const value = await ctx.client.callTool(toolName, args, {
      signal: ctx.signal,
      callGate: nestedCallGate(call, ctx, (d) => checkDecision(d as ApprovalDecision)),
      ...(ctx.toolTimeoutMs !== undefined ? { timeoutMs: ctx.toolTimeoutMs } : {}),
      tracing: { toolCallId: call.id, ...(ctx.traceContext ? { parentContext: ctx.traceContext } : {}) },
    });
    ctx.tools.touch(toolName);
    const plan = planOf(value);
    if (plan) ctx.emit({ type: 'plan', step: ctx.step, toolCallId: call.id, toolName, ...plan });
    const { text, media } = toolOutputParts(value);
    return { content: planned.note + text, isError: false, ...(media.length > 0 ? { media } : {}) };
  } catch (error) {
    if (ctx.signal.aborted) throw runAbortError(ctx.signal);
    ctx.emit({ type: 'error', step: ctx.step, phase: 'tool_call', toolCallId: call.id, toolName, error });
    return { content: planned.note + describeToolError(error, ctx.tools.modelName(call.name)), isError: true };
  }
}

async function runPlanned(planned: PlannedCall, ctx: ToolRunContext): Promise<ToolResultMessage> {
  if (planned.kind === 'result') return planned.message;
  if (planned.kind === 'pending')
    throw new UtcpError('INVALID_CONFIG', `The call ${planned.call.id} is still waiting for approval`);
  throwIfRunAborted(ctx.signal);
  const { call } = planned;
  const toolName = planned.kind === 'call' ? planned.toolName : SEARCH_TOOLS_NAME;
  ctx.emit({ type: 'tool_call_start', step: ctx.step, toolCallId: call.id, toolName, args: planned.args });
  const started = performance.now();
  const outcome = planned.kind === 'call' ? await runTool(planned, ctx) : await runSearch(planned, ctx);
  const truncated = truncateOutput(outcome.content, ctx.maxOutputChars);
  ctx.emit({
    type: 'tool_call_end',
    step: ctx.step,
    toolCallId: call.id,
    toolName,
    isError: outcome.isError,
    durationMs: performance.now() - started,
    outputChars: outcome.content.length,
    truncated: truncated.truncated,
    ...(outcome.media ? { mediaCount: outcome.media.length } : {}),
  });
  return {
    type: 'tool_result',
    toolCallId: call.id,
    toolName,
    content: truncated.text,
    isError: outcome.isError,
    ...(outcome.media ? { media: outcome.media } : {}),
  };
}

/** @internal Parses, looks up and approves one turn's calls in model order; nothing runs yet. */
export async function planToolCalls(calls: readonly ToolCall[], ctx: ToolRunContext): Promise<PlannedCall[]> {
  const planned: PlannedCall[] = [];
  for (const call of calls) planned.push(await planCall(call, ctx));
  return planned;
}

/**
 * @internal Runs a turn's planned calls with at most `ctx.concurrency` in flight. Every failure becomes a
 * tool result for the model; only the run's abort rejects. Results keep the model's order.
 */
export function runPlannedCalls(planned: readonly PlannedCall[], ctx: ToolRunContext): Promise<ToolResultMessage[]> {
  return mapConcurrent(planned, ctx.concurrency, (p) => runPlanned(p, ctx));
}
