/**
 * The agent's traces (docs/design/observability.md#agent-spans): one `invoke_agent` span per run, one
 * `chat {model}` span per model request, both through the client's tracing helpers in `utcp-kit/internal`. Tool
 * spans come from the client's `callTool`, parented on the run's span through `CallToolOptions.tracing`.
 */
import type { Trace } from '../../internal.js';
import type { ChatModel, ChatResponse, ModelRetryInfo, TokenUsage } from '../chat-model.js';

/** The part of `utcp-kit/internal` the agent traces with (loaded with the run, never at import). */
export interface AgentTracing {
  tracing: typeof import('../../internal.js').tracing;
  openTrace: typeof import('../../internal.js').openTrace;
}

/** Opens the run's `invoke_agent` span (INTERNAL: the loop runs in this process), or undefined. */
export function openRunTrace(t: AgentTracing, model: ChatModel, resumed: boolean): Promise<Trace | undefined> {
  if (!t.tracing('agent')) return Promise.resolve(undefined);
  // Checked later by the run itself: a missing model must not fail here first.
  const provider = typeof model?.provider === 'string' ? model.provider : undefined;
  const modelId = typeof model?.modelId === 'string' ? model.modelId : undefined;
  return t.openTrace('agent', () => ({
    name: 'invoke_agent',
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': modelId,
      'utcp.agent.resumed': resumed,
    },
    message: { provider, model: modelId, resumed },
  }));
}

export function endRunTrace(
  trace: Trace | undefined,
  result: { status: string; usage: TokenUsage; steps: readonly unknown[] },
): void {
  trace?.set(
    {
      'gen_ai.usage.input_tokens': result.usage.inputTokens,
      'gen_ai.usage.output_tokens': result.usage.outputTokens,
      'utcp.agent.steps': result.steps.length,
      'utcp.outcome': result.status,
    },
    {
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      steps: result.steps.length,
      outcome: result.status,
    },
  );
}

/** Opens a `chat {model}` span (CLIENT: a request to the provider) under the run's span, or undefined. */
export function openChatTrace(
  t: AgentTracing | undefined,
  run: Trace | undefined,
  model: ChatModel,
  step: number,
): Promise<Trace | undefined> {
  if (!t?.tracing('model')) return Promise.resolve(undefined);
  return t.openTrace('model', () => ({
    name: typeof model.modelId === 'string' && model.modelId !== '' ? `chat ${model.modelId}` : 'chat',
    client: true,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': model.provider,
      'gen_ai.request.model': model.modelId,
      'utcp.agent.step': step,
    },
    parent: run?.context,
    message: { provider: model.provider, model: model.modelId, step },
  }));
}

export function chatRetryEvent(trace: Trace | undefined, info: ModelRetryInfo): void {
  trace?.event('retry', {
    'utcp.retry.attempt': info.attempt,
    'utcp.retry.delay_ms': info.delayMs,
    'http.response.status_code': info.status,
  });
}

export function endChatTrace(trace: Trace | undefined, response: ChatResponse): void {
  if (!trace) return;
  const usage = response.usage;
  trace.set(
    {
      'gen_ai.usage.input_tokens': usage?.inputTokens,
      'gen_ai.usage.output_tokens': usage?.outputTokens,
      'gen_ai.response.finish_reasons': response.finishReason ? [response.finishReason] : undefined,
      'utcp.outcome': 'ok',
    },
    {
      inputTokens: usage?.inputTokens,
      outputTokens: usage?.outputTokens,
      finishReason: response.finishReason,
      toolCallCount: response.toolCalls.length,
      outcome: 'ok',
    },
  );
}
