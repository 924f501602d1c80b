/**
 * The conversation model the agent loop works on: a discriminated union on `type`, provider-neutral and
 * JSON-serialisable (a paused run's state holds it). Tool names in stored messages are the client's names
 * (`<manual>.<tool>`); adapters see encoded names.
 */

/** One tool call requested by the model. `arguments` is the JSON text the model produced, not yet parsed. */
export interface ToolCall {
  /** The provider's call id (`call_…`, `toolu_…`); tool results answer it. */
  id: string;
  name: string;
  arguments: string;
}

/** An image or a sound, base64-encoded (no `data:` prefix). */
export interface MediaContent {
  type: 'image' | 'audio';
  /** e.g. `image/png`, `audio/wav`. */
  mediaType: string;
  data: string;
}

/**
 * What a provider returned that must go back to it unchanged on the next turn: Anthropic thinking blocks
 * with their signatures, OpenAI Responses reasoning items, Gemini thought signatures. Adapters of other
 * providers ignore it.
 */
export interface ProviderData {
  provider: string;
  /** The provider's own items for this turn, in its wire format. */
  items: unknown[];
}

/** Text from the user, optionally with images (or sounds, where the provider takes them). */
export interface UserMessage {
  type: 'user';
  text: string;
  media?: MediaContent[];
}

/** A text answer from the model. */
export interface AssistantMessage {
  type: 'assistant';
  text: string;
  providerData?: ProviderData;
}

/** The model asks for tool calls, possibly with some text before them. */
export interface ToolCallsMessage {
  type: 'tool_calls';
  /** Text the model wrote alongside the calls; often empty. */
  text: string;
  calls: ToolCall[];
  providerData?: ProviderData;
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
  /** Images (and sounds) the tool returned, sent as the provider's native blocks. */
  media?: MediaContent[];
}

export type AgentMessage = UserMessage | AssistantMessage | ToolCallsMessage | ToolResultMessage;

/** Builds a user message, optionally with images: `userMessage('What is this?', [{ type: 'image', mediaType: 'image/png', data }])`. */
export function userMessage(text: string, media?: MediaContent[]): UserMessage {
  return media && media.length > 0 ? { type: 'user', text, media } : { type: 'user', text };
}

/** Builds an assistant text message (e.g. to replay an earlier answer). */
export function assistantMessage(text: string): AssistantMessage {
  return { type: 'assistant', text };
}

/** @internal Makes a `switch` exhaustive: adding a member to a union fails to compile wherever it is not handled. */
export function assertNever(value: never): never {
  throw new TypeError(`Unhandled case: ${JSON.stringify(value)}`);
}
