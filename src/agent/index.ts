/**
 * utcp-kit/agent: give registered tools to a model. `runAgent` is the loop; `openAIChatModel` and
 * `anthropicModel` are the built-in providers; `toOpenAITools`, `toAnthropicTools` and `toVercelAiTools`
 * export tools to other SDKs. Every name exported here is public API.
 */
export { runAgent, DEFAULT_MAX_STEPS, DEFAULT_MAX_TOOLS_INLINE, DEFAULT_TOOL_CONCURRENCY, DEFAULT_MAX_TOOL_OUTPUT_CHARS } from './run-agent.js';
export type { RunAgentOptions, AgentResult, AgentStep, AgentClient } from './run-agent.js';
export type { AgentEvent, AgentEventListener } from './agent-events.js';
export type { ToolSelection } from './agent-tool-set.js';
export { MAX_TOOLS_PER_REQUEST } from './agent-tool-set.js';
export { userMessage, assistantMessage, assertNever } from './messages.js';
export type { AgentMessage, UserMessage, AssistantMessage, ToolCallsMessage, ToolResultMessage, ToolCall } from './messages.js';
export type { ChatModel, ChatRequest, ChatResponse, ChatCallOptions, ModelToolDefinition, TokenUsage } from './chat-model.js';
export { openAIChatModel } from './openai-model.js';
export type { OpenAIChatModelOptions } from './openai-model.js';
export { anthropicModel } from './anthropic-model.js';
export type { AnthropicModelOptions } from './anthropic-model.js';
export { ModelApiError } from './model-api-error.js';
export { approvalActionFor } from './approval.js';
export type { ApprovalAction, ApprovalRule, ApprovalDecision, ApprovalRequest, ApprovalOptions } from './approval.js';
export { ToolNameCodec, MAX_TOOL_NAME_LENGTH } from './tool-names.js';
export type { ToolNameCodecOptions } from './tool-names.js';
export { toObjectRootSchema, toAnthropicInputSchema, toOpenAIParameters } from './schema-convert.js';
export type { OpenAIParameters } from './schema-convert.js';
export { dropStrictModeNulls } from './strict-arguments.js';
export { truncateOutput } from './truncate-output.js';
export type { TruncatedOutput } from './truncate-output.js';
export { toOpenAITools, toAnthropicTools, toVercelAiTools } from './export-tools.js';
export type { OpenAITool, AnthropicTool, VercelAiTool, ExportToolsOptions, VercelAiToolsOptions } from './export-tools.js';
export { SEARCH_TOOLS_NAME } from './search-tools-tool.js';
export { serveMcp, encodeMcpToolName } from './mcp-bridge.js';
export type { ServeMcpOptions, McpBridgeHandle, McpBridgeTransportOptions, McpBridgeClient, McpToolFilter } from './mcp-bridge.js';
