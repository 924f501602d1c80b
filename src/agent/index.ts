/**
 * utcp-kit/agent: give registered tools to a model. `runAgent` is the loop; `openAIChatModel` and
 * `anthropicModel` are the built-in providers; `toOpenAITools`, `toAnthropicTools` and `toVercelAiTools`
 * export tools to other SDKs. Every name exported here is public API.
 * The MCP bridge is its own entry point, `utcp-kit/mcp`.
 */
export { runAgent, resumeAgent } from './loop/run-agent.js';
export { AgentStateError } from './loop/run-state.js';
export type {
  RunAgentOptions,
  AgentResult,
  AgentStep,
  AgentClient,
  AgentRunState,
  PendingApproval,
  ApprovalDecisions,
  ResumeAgentOptions,
} from './loop/run-agent.js';
export type { AgentEvent, AgentEventListener } from './loop/agent-events.js';
export type { ToolSelection } from './loop/agent-tool-set.js';
export type {
  ApprovalAction,
  ApprovalRule,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalOptions,
} from './loop/approval.js';
export { userMessage, assistantMessage } from './messages.js';
export type {
  AgentMessage,
  UserMessage,
  AssistantMessage,
  ToolCallsMessage,
  ToolResultMessage,
  ToolCall,
  MediaContent,
  ProviderData,
} from './messages.js';
export type {
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatCallOptions,
  ModelToolDefinition,
  TokenUsage,
  ModelRetryInfo,
} from './chat-model.js';
export type { ModelConnectionOptions } from './providers/common.js';
export type { ModelRetryOptions } from './providers/retry.js';
export { openAIChatModel } from './providers/openai-model.js';
export type { OpenAIChatModelOptions } from './providers/openai-model.js';
export { anthropicModel } from './providers/anthropic-model.js';
export type { AnthropicModelOptions } from './providers/anthropic-model.js';
export { ModelApiError } from './providers/model-api-error.js';
export { dropStrictModeNulls } from './providers/strict-arguments.js';
export { ToolNameCodec } from './export/tool-names.js';
export type { ToolNameCodecOptions } from './export/tool-names.js';
export { toOpenAITools, toAnthropicTools, toVercelAiTools } from './export/export-tools.js';
export type {
  OpenAITool,
  AnthropicTool,
  VercelAiTool,
  ExportToolsOptions,
  VercelAiToolsOptions,
} from './export/export-tools.js';
export { responsesModel } from './providers/responses-model.js';
export type { ResponsesModelOptions } from './providers/responses-model.js';
export { geminiModel } from './providers/gemini-model.js';
export type { GeminiModelOptions } from './providers/gemini-model.js';
