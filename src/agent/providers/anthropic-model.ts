import type { Dispatcher } from 'undici';
import { UtcpError } from '../../index.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, TokenUsage } from '../chat-model.js';
import { anthropicToolFromDefinition } from '../export/export-tools.js';
import { assertNever, type AgentMessage, type ToolCall } from '../messages.js';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MODEL_TIMEOUT_MS, endpointUrl, postModelRequest, readBodyJson, readSseEvents } from './post-model-request.js';

export interface AnthropicModelOptions {
  /** Model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Base URL without the version path (the request goes to `<baseUrl>/v1/messages`). @default "https://api.anthropic.com" */
  baseUrl?: string;
  /** Extra headers, e.g. `anthropic-beta`. */
  headers?: Record<string, string>;
  /** `max_tokens` of each request. @default 4096 */
  maxTokens?: number;
  /** Stream the answer (SSE) and report text as it arrives. @default false */
  stream?: boolean;
  /** The `anthropic-version` header. @default "2023-06-01" */
  anthropicVersion?: string;
  /** Extra body fields for every request (`temperature`, `thinking`, …). */
  body?: Record<string, unknown>;
  /** Deadline for one request, body included, in milliseconds. @default 600_000 */
  timeoutMs?: number;
  /** Largest response body accepted, in bytes. @default 33_554_432 */
  maxResponseBytes?: number;
  dispatcher?: Dispatcher;
}

type Block = Record<string, unknown> & { type: string };
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

interface WireBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

/** Tool input must be an object on the wire; unparseable arguments (already reported to the model) become `{}`. */
function inputObject(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function blocksOf(m: AgentMessage): { role: 'user' | 'assistant'; blocks: Block[] } {
  const text = (t: string): Block[] => (t ? [{ type: 'text', text: t }] : []);
  switch (m.type) {
    case 'user':
      return { role: 'user', blocks: text(m.text) };
    case 'assistant':
      return { role: 'assistant', blocks: text(m.text) };
    case 'tool_calls':
      return { role: 'assistant', blocks: [...text(m.text), ...m.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: inputObject(c.arguments) }))] };
    case 'tool_result':
      return {
        role: 'user',
        blocks: [{ type: 'tool_result', tool_use_id: m.toolCallId, ...(m.content ? { content: m.content } : {}), ...(m.isError ? { is_error: true } : {}) }],
      };
    default:
      return assertNever(m);
  }
}

/**
 * @internal The Messages API `messages`: consecutive messages of one role merged (tool results of one turn
 * share one user message, as the API requires), empty text dropped, a lone text block sent as a string.
 */
export function toAnthropicMessages(messages: readonly AgentMessage[]): AnthropicMessage[] {
  const merged: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  for (const m of messages) {
    const { role, blocks } = blocksOf(m);
    if (blocks.length === 0) continue;
    const last = merged.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else merged.push({ role, content: blocks });
  }
  return merged.map((m) => (m.content.length === 1 && m.content[0].type === 'text' ? { role: m.role, content: m.content[0].text as string } : m));
}

function toUsage(usage: { input_tokens?: unknown; output_tokens?: unknown } | undefined): TokenUsage | undefined {
  if (!usage || typeof usage.input_tokens !== 'number') return undefined;
  return { inputTokens: usage.input_tokens, outputTokens: typeof usage.output_tokens === 'number' ? usage.output_tokens : 0 };
}

function fromBlocks(blocks: readonly WireBlock[], argumentsOf: (block: WireBlock, index: number) => string): Pick<ChatResponse, 'text' | 'toolCalls'> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  blocks.forEach((b, i) => {
    if (b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use' && b.id && b.name) toolCalls.push({ id: b.id, name: b.name, arguments: argumentsOf(b, i) });
  });
  return { text, toolCalls };
}

function parseMessage(data: unknown, provider: string): ChatResponse {
  const d = data as { type?: string; content?: WireBlock[]; stop_reason?: string; usage?: Parameters<typeof toUsage>[0] };
  if (!Array.isArray(d?.content)) throw new UtcpError('PROTOCOL_ERROR', `${provider} answered without a content array`);
  return { ...fromBlocks(d.content, (b) => JSON.stringify(b.input ?? {})), usage: toUsage(d.usage), finishReason: d.stop_reason ?? undefined };
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: Parameters<typeof toUsage>[0] };
  content_block?: WireBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
}

async function parseMessageStream(events: AsyncIterable<{ data: string }>, provider: string, options: ChatCallOptions): Promise<ChatResponse> {
  const blocks = new Map<number, { block: WireBlock; json: string }>();
  let usage: TokenUsage | undefined;
  let finishReason: string | undefined;
  for await (const event of events) {
    let e: StreamEvent;
    try {
      e = JSON.parse(event.data);
    } catch (cause) {
      throw new UtcpError('PROTOCOL_ERROR', `${provider} sent a stream event that is not JSON`, { cause });
    }
    const entry = e.index !== undefined ? blocks.get(e.index) : undefined;
    if (e.type === 'message_start') {
      usage = toUsage(e.message?.usage) ?? usage;
    } else if (e.type === 'content_block_start' && e.index !== undefined && e.content_block) {
      blocks.set(e.index, { block: { ...e.content_block }, json: '' });
    } else if (e.type === 'content_block_delta' && entry && e.delta?.type === 'text_delta' && e.delta.text) {
      entry.block.text = (entry.block.text ?? '') + e.delta.text;
      options.onTextDelta?.(e.delta.text);
    } else if (e.type === 'content_block_delta' && entry && e.delta?.type === 'input_json_delta' && e.delta.partial_json) {
      entry.json += e.delta.partial_json;
    } else if (e.type === 'message_delta') {
      if (e.delta?.stop_reason) finishReason = e.delta.stop_reason;
      if (usage && typeof e.usage?.output_tokens === 'number') usage = { ...usage, outputTokens: e.usage.output_tokens };
    } else if (e.type === 'error') {
      throw new UtcpError('PROTOCOL_ERROR', `${provider} stream failed: ${e.error?.type ?? 'error'}: ${e.error?.message ?? 'unknown error'}`);
    } else if (e.type === 'message_stop') {
      break;
    }
  }
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, v]) => v);
  const parsed = fromBlocks(ordered.map((v) => v.block), (b, i) => ordered[i].json || JSON.stringify(b.input ?? {}));
  return { ...parsed, usage, finishReason };
}

/** A ChatModel over the Anthropic Messages API, with optional streaming. */
export function anthropicModel(options: AnthropicModelOptions): ChatModel {
  const provider = 'anthropic';
  const url = endpointUrl(options.baseUrl ?? 'https://api.anthropic.com', 'v1/messages');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: options.stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': options.anthropicVersion ?? '2023-06-01',
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...(options.headers ?? {}),
  };
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return {
    provider,
    modelId: options.model,
    async generate(request: ChatRequest, callOptions) {
      // Anthropic refuses tool_use/tool_result blocks without tool definitions, so "no tools" is tool_choice none.
      const body: Record<string, unknown> = {
        model: options.model,
        max_tokens: options.maxTokens ?? 4096,
        ...(request.system ? { system: request.system } : {}),
        messages: toAnthropicMessages(request.messages),
        ...(request.tools.length > 0 ? { tools: request.tools.map(anthropicToolFromDefinition) } : {}),
        ...(request.tools.length > 0 && request.toolChoice === 'none' ? { tool_choice: { type: 'none' } } : {}),
        ...(options.stream ? { stream: true } : {}),
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
          maxResponseBytes: maxBytes,
          dispatcher: options.dispatcher,
        },
        async (responseBody, contentType) => {
          if (options.stream && !contentType.includes('json')) return parseMessageStream(readSseEvents(responseBody), provider, callOptions);
          return parseMessage(await readBodyJson(responseBody, maxBytes, `${provider} response`), provider);
        },
      );
    },
  };
}
