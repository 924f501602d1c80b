import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { UtcpError } from '../../index.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, TokenUsage } from '../chat-model.js';
import { openAIToolFromDefinition } from '../export/export-tools.js';
import { assertNever, type ToolCall } from '../messages.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MODEL_TIMEOUT_MS, endpointUrl, postModelRequest, readBodyJson, readSseEvents } from './post-model-request.js';
import { dropStrictModeNulls } from './strict-arguments.js';

export interface OpenAIChatModelOptions {
  /** Model id, e.g. `gpt-4.1-mini`, `llama3.1`. */
  model: string;
  /** Base URL including the version path. @default "https://api.openai.com/v1" */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer …`. Omit for servers without auth (Ollama, llama.cpp). */
  apiKey?: string;
  /** Extra headers, e.g. OpenRouter's `HTTP-Referer`. */
  headers?: Record<string, string>;
  /**
   * Stream the answer (SSE) and report text as it arrives. Sends `stream_options: { include_usage: true }`;
   * pass `body: { stream_options: undefined }` for a server that rejects it. @default false
   */
  stream?: boolean;
  /** Use strict function schemas where a tool's schema allows it. @default false */
  strict?: boolean;
  /** Sent as `parallel_tool_calls` when set. */
  parallelToolCalls?: boolean;
  /** Extra body fields for every request (`temperature`, `max_tokens`, `reasoning_effort`, …). */
  body?: Record<string, unknown>;
  /** Deadline for one request, body included, in milliseconds. @default 600_000 */
  timeoutMs?: number;
  /** Largest response body accepted, in bytes. @default 33_554_432 */
  maxResponseBytes?: number;
  /** undici dispatcher (proxy, connection pool). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

interface OpenAIWireToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: { type?: string; text?: unknown }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

function toUsage(usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined): TokenUsage | undefined {
  if (!usage || typeof usage.prompt_tokens !== 'number') return undefined;
  return { inputTokens: usage.prompt_tokens, outputTokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0 };
}

/** @internal The Chat Completions `messages` for a request. */
export function toOpenAIMessages(request: ChatRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const m of request.messages) {
    switch (m.type) {
      case 'user':
        out.push({ role: 'user', content: m.text });
        break;
      case 'assistant':
        out.push({ role: 'assistant', content: m.text });
        break;
      case 'tool_calls':
        out.push({
          role: 'assistant',
          content: m.text === '' ? null : m.text,
          tool_calls: m.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        });
        break;
      case 'tool_result':
        out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
        break;
      default:
        assertNever(m);
    }
  }
  return out;
}

function toToolCall(wire: OpenAIWireToolCall): ToolCall {
  return { id: wire.id || `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`, name: wire.function?.name ?? '', arguments: argumentsText(wire.function?.arguments) };
}

function parseCompletion(data: unknown, provider: string): ChatResponse {
  const d = data as { choices?: Array<{ message?: { content?: unknown; tool_calls?: OpenAIWireToolCall[] }; finish_reason?: string }>; usage?: Parameters<typeof toUsage>[0] };
  const choice = d?.choices?.[0];
  if (!choice?.message) throw new UtcpError('PROTOCOL_ERROR', `${provider} answered without choices[0].message`);
  const toolCalls = (choice.message.tool_calls ?? []).filter((c) => c?.function?.name).map(toToolCall);
  return { text: contentText(choice.message.content), toolCalls, usage: toUsage(d.usage), finishReason: choice.finish_reason ?? undefined };
}

async function parseCompletionStream(events: AsyncIterable<{ data: string }>, provider: string, options: ChatCallOptions): Promise<ChatResponse> {
  let text = '';
  let usage: TokenUsage | undefined;
  let finishReason: string | undefined;
  const calls = new Map<number, OpenAIWireToolCall & { name: string; args: string }>();
  for await (const event of events) {
    if (event.data.trim() === '[DONE]') break;
    let chunk: { error?: { message?: string }; usage?: Parameters<typeof toUsage>[0]; choices?: Array<{ delta?: { content?: unknown; tool_calls?: OpenAIWireToolCall[] }; finish_reason?: string | null }> };
    try {
      chunk = JSON.parse(event.data);
    } catch (cause) {
      throw new UtcpError('PROTOCOL_ERROR', `${provider} sent a stream event that is not JSON`, { cause });
    }
    if (chunk.error) throw new UtcpError('PROTOCOL_ERROR', `${provider} stream failed: ${chunk.error.message ?? 'unknown error'}`);
    usage = toUsage(chunk.usage) ?? usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    const piece = contentText(delta.content);
    if (piece) {
      text += piece;
      options.onTextDelta?.(piece);
    }
    for (const part of delta.tool_calls ?? []) {
      const index = part.index ?? calls.size;
      let call = calls.get(index);
      if (!call) calls.set(index, (call = { name: '', args: '' }));
      if (part.id) call.id = part.id;
      if (part.function?.name && !call.name) call.name = part.function.name;
      call.args += argumentsText(part.function?.arguments);
    }
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .filter(([, c]) => c.name)
    .map(([, c]) => toToolCall({ id: c.id, function: { name: c.name, arguments: c.args } }));
  return { text, toolCalls, usage, finishReason };
}

/**
 * A ChatModel over the OpenAI Chat Completions wire format, so OpenAI, OpenRouter, Ollama, vLLM,
 * llama.cpp server and LM Studio all work. Requests go through undici with the run's signal and a deadline.
 */
export function openAIChatModel(options: OpenAIChatModelOptions): ChatModel {
  const provider = 'openai';
  const url = endpointUrl(options.baseUrl ?? DEFAULT_BASE_URL, 'chat/completions');
  const strict = options.strict ?? false;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: options.stream ? 'text/event-stream' : 'application/json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    ...(options.headers ?? {}),
  };
  return {
    provider,
    modelId: options.model,
    async generate(request, callOptions) {
      const withTools = request.toolChoice === 'auto' && request.tools.length > 0;
      const body: Record<string, unknown> = {
        model: options.model,
        messages: toOpenAIMessages(request),
        ...(withTools ? { tools: request.tools.map((t) => openAIToolFromDefinition(t, strict)) } : {}),
        ...(withTools && options.parallelToolCalls !== undefined ? { parallel_tool_calls: options.parallelToolCalls } : {}),
        ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        ...(options.body ?? {}),
      };
      return postModelRequest(
        {
          provider,
          url,
          headers,
          body,
          signal: callOptions.signal,
          timeoutMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
          secrets: options.apiKey ? [options.apiKey] : [],
          maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
          dispatcher: options.dispatcher,
        },
        async (responseBody, contentType) => {
          if (options.stream && !contentType.includes('json')) return parseCompletionStream(readSseEvents(responseBody), provider, callOptions);
          return parseCompletion(await readBodyJson(responseBody, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, `${provider} response`), provider);
        },
      );
    },
    ...(strict ? { prepareArguments: dropStrictModeNulls } : {}),
  };
}
