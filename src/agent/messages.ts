/**
 * The conversation model the agent loop works on: a discriminated union on `type`, provider-neutral.
 * Tool names in stored messages are the client's names (`<manual>.<tool>`); adapters see encoded names.
 */

/** One tool call requested by the model. `arguments` is the JSON text the model produced, not yet parsed. */
export interface ToolCall {
  /** The provider's call id (`call_…`, `toolu_…`); tool results answer it. */
  id: string;
  name: string;
  arguments: string;
}

/** Text from the user. */
export interface UserMessage {
  type: 'user';
  text: string;
}

/** A text answer from the model. */
export interface AssistantMessage {
  type: 'assistant';
  text: string;
}

/** The model asks for tool calls, possibly with some text before them. */
export interface ToolCallsMessage {
  type: 'tool_calls';
  /** Text the model wrote alongside the calls; often empty. */
  text: string;
  calls: ToolCall[];
}

/** The outcome of one tool call, sent back to the model. */
export interface ToolResultMessage {
  type: 'tool_result';
  /** The `id` of the ToolCall this answers. */
  toolCallId: string;
  toolName: string;
  /** What the model reads: the tool's output, or a description of what went wrong. */
  content: string;
  isError: boolean;
}

export type AgentMessage = UserMessage | AssistantMessage | ToolCallsMessage | ToolResultMessage;

/** Builds a user message. */
export function userMessage(text: string): UserMessage {
  return { type: 'user', text };
}

/** Builds an assistant text message (e.g. to replay an earlier answer). */
export function assistantMessage(text: string): AssistantMessage {
  return { type: 'assistant', text };
}

/** Makes a `switch` exhaustive: adding a member to a union fails to compile wherever it is not handled. */
export function assertNever(value: never): never {
  throw new TypeError(`Unhandled case: ${JSON.stringify(value)}`);
}
