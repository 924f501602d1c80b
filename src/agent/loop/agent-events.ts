import type { JsonObject } from '../../index.js';
import type { TokenUsage } from '../chat-model.js';
import type { ToolCall } from '../messages.js';

/** Something that happened during a run, reported to `onEvent` as it happens. Tool names are client names. */
export type AgentEvent =
  | {
      type: 'model_request';
      step: number;
      provider: string;
      model: string;
      messageCount: number;
      toolNames: string[];
      toolChoice: 'auto' | 'none';
    }
  | { type: 'text_delta'; step: number; text: string }
  | {
      type: 'model_response';
      step: number;
      text: string;
      toolCalls: ToolCall[];
      usage?: TokenUsage;
      finishReason?: string;
      durationMs: number;
    }
  /** A call the policy denied, or one the approver decided (calls the policy simply allows send none). */
  | {
      type: 'approval';
      step: number;
      toolCallId: string;
      toolName: string;
      decision: 'allow' | 'deny' | 'edit';
      by: 'policy' | 'approver';
      reason?: string;
      /** Set on a call a tool made on behalf of `toolCallId` (a code-mode script's call to `toolName`). */
      nested?: true;
    }
  | { type: 'tool_call_start'; step: number; toolCallId: string; toolName: string; args: JsonObject }
  | {
      type: 'tool_call_end';
      step: number;
      toolCallId: string;
      toolName: string;
      isError: boolean;
      durationMs: number;
      outputChars: number;
      truncated: boolean;
      mediaCount?: number;
    }
  /** A model request failed and will be tried again after `delayMs`. */
  | {
      type: 'model_retry';
      step: number;
      provider: string;
      attempt: number;
      maxRetries: number;
      delayMs: number;
      status?: number;
      requestId?: string;
      error: unknown;
    }
  /** The run paused: these calls wait for a decision (see `resumeAgent`). */
  | { type: 'paused'; step: number; pending: Array<{ toolCallId: string; toolName: string; args: JsonObject }> }
  | { type: 'tools_loaded'; step: number; query: string; toolNames: string[] }
  /**
   * A tool answered with a plan (`{ type: 'plan', steps }`, as `utcp-kit/tools`' `update_plan` does): the current
   * ordered steps, for a UI to render (docs/design/agent.md#plan-events).
   */
  | {
      type: 'plan';
      step: number;
      toolCallId: string;
      toolName: string;
      steps: Array<{ step: string; status: string }>;
      explanation?: string;
    }
  | { type: 'step_limit_reached'; step: number; maxSteps: number }
  | {
      type: 'error';
      step: number;
      /** `model`: the model request failed (the run rejects); `tool_call`: a call failed and the model was told. */
      phase: 'model' | 'tool_call';
      toolCallId?: string;
      toolName?: string;
      error: unknown;
    };

/** Receives the run's events. It is called synchronously; an error it throws ends the run. */
export type AgentEventListener = (event: AgentEvent) => void;
