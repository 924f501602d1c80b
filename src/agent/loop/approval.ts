import type { JsonObject, Tool } from '../../index.js';
import { matchGlob } from './match-glob.js';

/** What a policy rule does with a matching call: run it, ask the `approve` callback, or refuse it. */
export type ApprovalAction = 'allow' | 'ask' | 'deny';

/**
 * One policy rule. A rule matches when every selector it sets matches (a rule with none matches every tool);
 * the first matching rule wins.
 */
export interface ApprovalRule {
  /** Globs over full tool names, e.g. `github.*`, `*.delete_*`. */
  tools?: readonly string[];
  /** Matches when the tool has any of these tags (case-insensitive). */
  tags?: readonly string[];
  /** Globs over manual names. */
  manuals?: readonly string[];
  action: ApprovalAction;
  /** Told to the model when `action` is `deny`. */
  reason?: string;
}

/**
 * The answer of an `approve` callback: run the call, refuse it (the reason goes to the model), run it with other
 * arguments, or `defer`: pause the run and return its state, to resume later with `resumeAgent`.
 */
export type ApprovalDecision =
  | { type: 'allow' }
  | { type: 'deny'; reason?: string }
  | { type: 'edit'; args: JsonObject }
  | { type: 'defer' };

/** A call waiting for a decision. */
export interface ApprovalRequest {
  toolCallId: string;
  toolName: string;
  args: JsonObject;
  tool: Tool;
  /** The rule that asked for approval, when one did. */
  rule?: ApprovalRule;
}

export interface ApprovalOptions {
  /** Rules tried in order. */
  policy?: readonly ApprovalRule[];
  /** Action when no rule matches. @default 'allow' */
  defaultAction?: ApprovalAction;
  /**
   * Decides calls whose action is `ask`. Without it, such calls pause the run (its result holds a `state`
   * to resume later). It receives the run's signal: when the run is aborted, the run settles at once
   * whether or not the callback has returned. Errors it throws end the run.
   */
  approve?: (
    request: ApprovalRequest,
    options: { signal: AbortSignal },
  ) => ApprovalDecision | Promise<ApprovalDecision>;
}

function manualOf(toolName: string): string {
  const dot = toolName.indexOf('.');
  return dot < 0 ? '' : toolName.slice(0, dot);
}

function ruleMatches(rule: ApprovalRule, tool: Tool): boolean {
  if (rule.tools && !rule.tools.some((g) => matchGlob(g, tool.name))) return false;
  if (rule.manuals && !rule.manuals.some((g) => matchGlob(g, manualOf(tool.name)))) return false;
  if (rule.tags) {
    const wanted = new Set(rule.tags.map((t) => t.toLowerCase()));
    if (!(tool.tags ?? []).some((t) => wanted.has(t.toLowerCase()))) return false;
  }
  return true;
}

/** The action the policy gives `tool`, and the rule that gave it (none when the default applied). */
export function approvalActionFor(
  tool: Tool,
  options: ApprovalOptions,
): { action: ApprovalAction; rule?: ApprovalRule } {
  const rule = (options.policy ?? []).find((r) => ruleMatches(r, tool));
  return rule ? { action: rule.action, rule } : { action: options.defaultAction ?? 'allow' };
}
