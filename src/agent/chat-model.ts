/**
 * The contract between the agent loop and a model provider. Implement `ChatModel` to plug in any provider;
 * `openAIChatModel`, `responsesModel`, `anthropicModel` and `geminiModel` are the built-in ones.
 */
import type { JsonObject, JsonSchema } from '../index.js';
import type { AgentMessage, ProviderData, ToolCall } from './messages.js';

/** A tool as offered to the model: an encoded name (`[a-zA-Z0-9_-]`, at most 64 characters) and the tool's raw input schema. */
export interface ModelToolDefinition {
  name: string;
  description: string;
  /** The tool's `inputs` schema as registered; each adapter converts it to what its provider accepts. */
  inputSchema: JsonSchema;
}

export interface TokenUsage {
  /** Prompt tokens, cached ones included. */
  inputTokens: number;
  /** Completion tokens, reasoning included. */
  outputTokens: number;
  /** Prompt tokens read from the provider's cache. */
  cachedInputTokens?: number;
  /** Prompt tokens written to the cache (Anthropic). */
  cacheWriteTokens?: number;
  /** Output tokens spent on reasoning / thinking. */
  reasoningTokens?: number;
}

/** One model turn to run. Tool names in `messages` and `tools` are already encoded. */
export interface ChatRequest {
  system?: string;
  messages: readonly AgentMessage[];
  tools: readonly ModelToolDefinition[];
  /** `none` asks for a text answer (used when the step limit is reached). */
  toolChoice: 'auto' | 'none';
}

/** What the model answered. No tool calls means `text` is the answer. */
export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage?: TokenUsage;
  /** The provider's stop reason, as sent (`stop`, `tool_calls`, `end_turn`, `tool_use`, …). */
  finishReason?: string;
  /** Items to send back on the next turn (thinking blocks, reasoning items); stored on the assistant message. */
  providerData?: ProviderData;
}

/** A failed try that will be retried. */
export interface ModelRetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  maxRetries: number;
  /** Wait before the retry. */
  delayMs: number;
  /** HTTP status of the failed try; absent for a connection failure. */
  status?: number;
  requestId?: string;
  error: unknown;
}

export interface ChatCallOptions {
  signal: AbortSignal;
  /** Receives text as it streams in, when the model streams. */
  onTextDelta?: (text: string) => void;
  /** Told before each retry of a failed request. */
  onRetry?: (info: ModelRetryInfo) => void;
}

/** A chat model with tool calling. */
export interface ChatModel {
  /** e.g. `openai`, `anthropic`; used in events and error messages. */
  readonly provider: string;
  readonly modelId: string;
  /**
   * Runs one turn.
   * @throws ModelApiError on a non-2xx answer (after retries), UtcpAbortError / UtcpTimeoutError when cancelled, TransportError when unreachable.
   */
  generate(request: ChatRequest, options: ChatCallOptions): Promise<ChatResponse>;
  /** Adjusts parsed arguments before the call (OpenAI strict mode drops the `null`s it adds for optional fields). */
  prepareArguments?(args: JsonObject, inputSchema: JsonSchema): JsonObject;
  /** Longest tool name the provider accepts. @default 64 */
  readonly maxToolNameLength?: number;
  /**
   * Releases the model's connections (the built-in models' own keep-alive pool; a `dispatcher` passed in options is
   * the caller's and stays open). A request after `close()` opens a new pool.
   */
  close?(): Promise<void>;
}
