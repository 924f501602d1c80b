/**
 * Re-decides a paused turn on resume (docs/design/agent.md#resume-checks). The state's plan is a claim, not a fact:
 * each call is looked up again in the tools the resumed run offers and checked against the resumed run's policy as a
 * fresh call would be. The state can only make a call wait longer or refuse it; it can never make one run that a
 * fresh call would not. Only a state whose MAC verified (`signed`) keeps the approvals given before the pause.
 */
import { isDeepStrictEqual } from 'node:util';
import { UtcpError, type JsonObject, type Tool } from '../../index.js';
import { approvalActionFor, type ApprovalAction, type ApprovalDecision } from './approval.js';
import { applyDecision, planToolCalls, type PlannedCall, type ToolRunContext } from './execute-tool-calls.js';
import { parseToolArguments } from './parse-tool-arguments.js';
import { AgentStateError } from './run-state.js';

type Pending = Extract<PlannedCall, { kind: 'pending' }>;
type ToolEntry = Extract<PlannedCall, { kind: 'call' | 'pending' }>;

/** What a fresh call of `entry` would be: its tool in this run and its arguments, or nothing to check against. */
interface Fresh {
  tool: Tool;
  args: JsonObject;
  action: ApprovalAction;
}

function freshCall(entry: ToolEntry, index: number, ctx: ToolRunContext): Fresh | undefined {
  const { call } = entry;
  if (ctx.tools.isSearchTool(call.name)) return undefined;
  const tool = ctx.tools.resolve(call.name);
  if (!tool) return undefined;
  if (tool.name !== entry.toolName)
    throw new AgentStateError(`state.planned[${index}].toolName`, 'is not the tool the call names');
  const parsed = parseToolArguments(call.arguments);
  if ('error' in parsed) return undefined;
  const args = ctx.model.prepareArguments ? ctx.model.prepareArguments(parsed.args, tool.inputs) : parsed.args;
  const action = ctx.approval ? approvalActionFor(tool, ctx.approval).action : 'allow';
  return { tool, args, action };
}

/** True when the entry waits for (or may take) a decision from the resumer: it names exactly this pending id. */
function takesDecision(entry: PlannedCall, fresh: Fresh | undefined, signed: boolean): boolean {
  if (entry.kind === 'pending') return true;
  if (entry.kind !== 'call' || signed || !fresh || fresh.action === 'deny') return false;
  return fresh.action === 'ask' || isEdited(entry, fresh);
}

function isEdited(entry: Extract<PlannedCall, { kind: 'call' }>, fresh: Fresh): boolean {
  return entry.note !== '' || !isDeepStrictEqual(entry.args, fresh.args);
}

function decide(
  entry: ToolEntry,
  fresh: Fresh,
  args: JsonObject,
  decision: ApprovalDecision,
  ctx: ToolRunContext,
): PlannedCall {
  if (decision.type !== 'defer')
    ctx.emit({
      type: 'approval',
      step: ctx.step,
      toolCallId: entry.call.id,
      toolName: fresh.tool.name,
      decision: decision.type,
      by: 'approver',
      ...(decision.type === 'deny' && decision.reason ? { reason: decision.reason } : {}),
    });
  const reason = entry.kind === 'pending' ? entry.reason : 'unverified';
  const pending: Pending = { kind: 'pending', call: entry.call, toolName: fresh.tool.name, args, reason };
  return applyDecision(pending, decision, ctx);
}

async function replan(call: ToolEntry['call'], ctx: ToolRunContext): Promise<PlannedCall> {
  return (await planToolCalls([call], ctx))[0]!;
}

/**
 * The paused turn's plan as the resumed run decides it. `decisions` are by tool call id; a decision for an id
 * that does not wait for one is refused (UtcpError INVALID_CONFIG) before anything runs or any approver is asked.
 */
export async function replanPausedTurn(
  planned: readonly PlannedCall[],
  decisions: Readonly<Record<string, ApprovalDecision>>,
  ctx: ToolRunContext,
  signed: boolean,
): Promise<PlannedCall[]> {
  const fresh = planned.map((p, i) => (p.kind === 'call' || p.kind === 'pending' ? freshCall(p, i, ctx) : undefined));
  const open = new Set<string>();
  planned.forEach((p, i) => {
    if (p.kind !== 'result' && takesDecision(p, fresh[i], signed)) open.add(p.call.id);
  });
  for (const id of Object.keys(decisions))
    if (!open.has(id))
      throw new UtcpError(
        'INVALID_CONFIG',
        `resumeAgent: decisions[${JSON.stringify(id)}]: no call of the paused turn with this id waits for a decision`,
      );
  const out: PlannedCall[] = [];
  for (const [i, entry] of planned.entries()) out.push(await recheck(entry, fresh[i], decisions, ctx, signed));
  return out;
}

async function recheck(
  entry: PlannedCall,
  fresh: Fresh | undefined,
  decisions: Readonly<Record<string, ApprovalDecision>>,
  ctx: ToolRunContext,
  signed: boolean,
): Promise<PlannedCall> {
  // A result runs nothing: the state may refuse a call, never run one.
  if (entry.kind === 'result') return entry;
  // A search, an unknown tool, bad arguments or a denied tool: exactly what a fresh call gets.
  if (entry.kind === 'search' || !fresh || fresh.action === 'deny') return replan(entry.call, ctx);
  // Only a verified MAC proves that the approver allowed (or edited) this call before the pause.
  if (entry.kind === 'call' && signed) return entry;
  const decision = Object.hasOwn(decisions, entry.call.id) ? decisions[entry.call.id] : undefined;
  if (entry.kind === 'pending') {
    const args = signed ? entry.args : fresh.args;
    if (decision) return decide(entry, fresh, args, decision, ctx);
    if (fresh.action === 'ask' && ctx.approval?.approve) return replan(entry.call, ctx);
    return { kind: 'pending', call: entry.call, toolName: fresh.tool.name, args, reason: entry.reason };
  }
  // An unsigned "already approved" call: the resumed policy decides it as a fresh call. Where that needs a decision
  // (or the state claims an edit, which it cannot prove), it waits: neither the edited nor the model's own
  // arguments run on the state's word. An approver of this resume is asked afresh.
  const edited = isEdited(entry, fresh);
  const args = edited ? entry.args : fresh.args;
  if (decision) return decide(entry, fresh, args, decision, ctx);
  if ((fresh.action === 'ask' && !ctx.approval?.approve) || (fresh.action === 'allow' && edited))
    return { kind: 'pending', call: entry.call, toolName: fresh.tool.name, args, reason: 'unverified' };
  return replan(entry.call, ctx);
}
