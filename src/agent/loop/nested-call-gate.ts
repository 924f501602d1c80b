import { ToolNotFoundError, UtcpError, type CallGate } from '../../index.js';
import type { AgentEventListener } from './agent-events.js';
import type { AgentToolSet } from './agent-tool-set.js';
import { approvalActionFor, type ApprovalOptions } from './approval.js';
import type { ToolCall } from '../messages.js';
import { untilAborted } from './run-abort-error.js';

/** @internal What the gate needs of a turn's tool context. */
export interface NestedGateContext {
  tools: Pick<AgentToolSet, 'resolve'>;
  approval?: ApprovalOptions;
  step: number;
  signal: AbortSignal;
  emit: AgentEventListener;
}

function denied(toolName: string, reason: string): UtcpError {
  return new UtcpError('TOOL_ERROR', `Denied: the call to ${toolName} was not approved: ${reason}`);
}

/**
 * @internal The gate for the calls a tool makes on behalf of the model's call `outer` (a code-mode script's calls):
 * each nested call must name one of this run's tools and passes the run's approval policy like a direct call. A
 * script cannot pause, so `ask` without an approver and `defer` refuse the call (docs/design/code-mode.md#approvals).
 * Approval events carry the outer call's id and `nested: true`.
 */
export function nestedCallGate(
  outer: ToolCall,
  ctx: NestedGateContext,
  check: (decision: unknown) => unknown,
): CallGate {
  return async ({ toolName, args }) => {
    const tool = ctx.tools.resolve(toolName);
    if (!tool || tool.name !== toolName) throw new ToolNotFoundError(toolName);
    if (!ctx.approval) return args;
    const { action, rule } = approvalActionFor(tool, ctx.approval);
    if (action === 'allow') return args;
    const base = { type: 'approval', step: ctx.step, toolCallId: outer.id, toolName, nested: true } as const;
    if (action === 'deny') {
      const reason = rule?.reason ?? 'the policy does not allow this tool';
      ctx.emit({ ...base, decision: 'deny', by: 'policy', reason });
      throw denied(toolName, reason);
    }
    const approve = ctx.approval.approve;
    if (!approve) throw denied(toolName, 'it needs approval, and a script cannot wait for one (no approver is set)');
    const request = { toolCallId: outer.id, toolName, args, tool, ...(rule ? { rule } : {}) };
    const decision = check(
      await untilAborted(
        Promise.resolve().then(() => approve(request, { signal: ctx.signal })),
        ctx.signal,
      ),
    ) as Awaited<ReturnType<typeof approve>>;
    if (decision.type === 'defer') throw denied(toolName, 'the approver deferred it, and a script cannot pause');
    ctx.emit({
      ...base,
      decision: decision.type,
      by: 'approver',
      ...(decision.type === 'deny' && decision.reason ? { reason: decision.reason } : {}),
    });
    if (decision.type === 'deny') throw denied(toolName, decision.reason ?? 'the approver refused it');
    return decision.type === 'edit' ? decision.args : args;
  };
}
