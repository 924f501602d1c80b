/**
 * A ChatModel over the Anthropic Messages API (docs/design/agent.md#anthropic): thinking and
 * redacted_thinking blocks are kept with their signatures and sent back unchanged, tool results carry
 * images as native blocks, `cache_control` hints are optional.
 */
import { UtcpError } from '../../index.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, TokenUsage } from '../chat-model.js';
import { anthropicToolFromDefinition } from '../export/export-tools.js';
import { assertNever, type AgentMessage, type MediaContent, type ToolCall } from '../messages.js';
import { inputObject, isCommonImage, joinText, splitMedia, type ModelConnectionOptions } from './common.js';
import { endpointUrl, modelHttp, parseEventJson, readBodyJson, readSseEvents } from './model-http.js';

export interface AnthropicModelOptions extends ModelConnectionOptions {
  /** Model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Base URL without the version path (the request goes to `<baseUrl>/v1/messages`). @default "https://api.anthropic.com" */
  baseUrl?: string;
  /** `max_tokens` of each request. @default 4096 */
  maxTokens?: number;
  /** Stream the answer (SSE) and report text as it arrives. @default false */
  stream?: boolean;
  /** The `anthropic-version` header. @default "2023-06-01" */
  anthropicVersion?: string;
  /**
   * Extended thinking with this token budget (`thinking: { type: "enabled", budget_tokens }`); must be below
   * `maxTokens`. Thinking blocks are kept in the conversation and sent back as the API requires.
   */
  thinkingBudgetTokens?: number;
  /** Thinking between tool calls of one turn (sends the `interleaved-thinking-2025-05-14` beta header). @default false */
  interleavedThinking?: boolean;
  /** Prompt-caching hints: `cache_control: { type: "ephemeral" }` on the system prompt and/or the last tool. */
  cacheControl?: { system?: boolean; tools?: boolean };
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
  thinking?: string;
  signature?: string;
  data?: string;
}

const PROVIDER = 'anthropic';

function imageBlock(m: MediaContent): Block {
  return { type: 'image', source: { type: 'base64', media_type: m.mediaType, data: m.data } };
}

function blocksOf(m: AgentMessage, options: ModelConnectionOptions): { role: 'user' | 'assistant'; blocks: Block[] } {
  const text = (t: string): Block[] => (t ? [{ type: 'text', text: t }] : []);
  switch (m.type) {
    case 'user': {
      const { native, note } = splitMedia(m.media, options, isCommonImage);
      return { role: 'user', blocks: [...native.map(imageBlock), ...text(joinText(m.text, note))] };
    }
    case 'assistant':
      if (m.providerData?.provider === PROVIDER) return { role: 'assistant', blocks: m.providerData.items as Block[] };
      return { role: 'assistant', blocks: text(m.text) };
    case 'tool_calls':
      if (m.providerData?.provider === PROVIDER) return { role: 'assistant', blocks: m.providerData.items as Block[] };
      return {
        role: 'assistant',
        blocks: [
          ...text(m.text),
          ...m.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: inputObject(c.arguments) })),
        ],
      };
    case 'tool_result': {
      const { native, note } = splitMedia(m.media, options, isCommonImage);
      const body = joinText(m.content, note);
      const content: Block[] | string | undefined =
        native.length > 0 ? [...text(body), ...native.map(imageBlock)] : body || undefined;
      return {
        role: 'user',
        blocks: [
          {
            type: 'tool_result',
            tool_use_id: m.toolCallId,
            ...(content !== undefined ? { content } : {}),
            ...(m.isError ? { is_error: true } : {}),
          },
        ],
      };
    }
    default:
      return assertNever(m);
  }
}

/**
 * @internal The Messages API `messages`: consecutive messages of one role merged (tool results of one turn
 * share one user message, as the API requires), empty text dropped, a lone text block sent as a string.
 */
export function toAnthropicMessages(
  messages: readonly AgentMessage[],
  options: ModelConnectionOptions = {},
): AnthropicMessage[] {
  const merged: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  for (const m of messages) {
    const { role, blocks } = blocksOf(m, options);
    if (blocks.length === 0) continue;
    const last = merged.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else merged.push({ role, content: [...blocks] });
  }
  return merged.map((m) =>
    m.content.length === 1 && m.content[0].type === 'text' ? { role: m.role, content: m.content[0].text as string } : m,
  );
}

interface WireUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Anthropic counts cached prompt tokens apart from `input_tokens`; ours includes them. */
function toUsage(usage: WireUsage | undefined): TokenUsage | undefined {
  if (!usage || typeof usage.input_tokens !== 'number') return undefined;
  const read = num(usage.cache_read_input_tokens);
  const write = num(usage.cache_creation_input_tokens);
  return {
    inputTokens: usage.input_tokens + read + write,
    outputTokens: num(usage.output_tokens),
    ...(read ? { cachedInputTokens: read } : {}),
    ...(write ? { cacheWriteTokens: write } : {}),
  };
}

function fromBlocks(
  blocks: readonly WireBlock[],
  argumentsOf: (block: WireBlock, index: number) => string,
): Pick<ChatResponse, 'text' | 'toolCalls' | 'providerData'> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let thinking = false;
  blocks.forEach((b, i) => {
    if (b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use' && b.id && b.name)
      toolCalls.push({ id: b.id, name: b.name, arguments: argumentsOf(b, i) });
    else if (b.type === 'thinking' || b.type === 'redacted_thinking') thinking = true;
  });
  if (!thinking) return { text, toolCalls };
  // The API wants the assistant turn back as it was: thinking blocks (signatures intact) before the tool_use blocks.
  const items = blocks.map((b, i) =>
    b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, input: inputObject(argumentsOf(b, i)) } : b,
  );
  return { text, toolCalls, providerData: { provider: PROVIDER, items } };
}

function parseMessage(data: unknown): ChatResponse {
  const d = data as { type?: string; content?: WireBlock[]; stop_reason?: string; usage?: WireUsage };
  if (!Array.isArray(d?.content)) throw new UtcpError('PROTOCOL_ERROR', `${PROVIDER} answered without a content array`);
  return {
    ...fromBlocks(d.content, (b) => JSON.stringify(b.input ?? {})),
    usage: toUsage(d.usage),
    finishReason: d.stop_reason ?? undefined,
  };
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: WireBlock;
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string;
  };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

async function parseMessageStream(
  events: AsyncIterable<{ data: string }>,
  options: ChatCallOptions,
): Promise<ChatResponse> {
  const blocks = new Map<number, { block: WireBlock; json: string }>();
  let usage: TokenUsage | undefined;
  let startUsage: WireUsage | undefined;
  let finishReason: string | undefined;
  for await (const event of events) {
    const e = parseEventJson<StreamEvent>(event.data, PROVIDER);
    const entry = e.index !== undefined ? blocks.get(e.index) : undefined;
    if (e.type === 'message_start') {
      startUsage = e.message?.usage;
      usage = toUsage(startUsage) ?? usage;
    } else if (e.type === 'content_block_start' && e.index !== undefined && e.content_block) {
      blocks.set(e.index, { block: { ...e.content_block }, json: '' });
    } else if (e.type === 'content_block_delta' && entry && e.delta) {
      const d = e.delta;
      if (d.type === 'text_delta' && d.text) {
        entry.block.text = (entry.block.text ?? '') + d.text;
        options.onTextDelta?.(d.text);
      } else if (d.type === 'input_json_delta' && d.partial_json) entry.json += d.partial_json;
      else if (d.type === 'thinking_delta' && d.thinking)
        entry.block.thinking = (entry.block.thinking ?? '') + d.thinking;
      else if (d.type === 'signature_delta' && d.signature)
        entry.block.signature = (entry.block.signature ?? '') + d.signature;
    } else if (e.type === 'message_delta') {
      if (e.delta?.stop_reason) finishReason = e.delta.stop_reason;
      if (typeof e.usage?.output_tokens === 'number')
        usage = toUsage({
          ...(startUsage ?? { input_tokens: 0 }),
          ...e.usage,
          input_tokens: num(e.usage.input_tokens) || num(startUsage?.input_tokens),
        });
    } else if (e.type === 'error') {
      throw new UtcpError(
        'PROTOCOL_ERROR',
        `${PROVIDER} stream failed: ${e.error?.type ?? 'error'}: ${e.error?.message ?? 'unknown error'}`,
      );
    } else if (e.type === 'message_stop') {
      break;
    }
  }
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, v]) => v);
  const parsed = fromBlocks(
    ordered.map((v) => v.block),
    (b, i) => ordered[i].json || JSON.stringify(b.input ?? {}),
  );
  return { ...parsed, usage, finishReason };
}

/** A ChatModel over the Anthropic Messages API, with optional streaming, extended thinking and prompt caching. */
export function anthropicModel(options: AnthropicModelOptions): ChatModel {
  const url = endpointUrl(options.baseUrl ?? 'https://api.anthropic.com', 'v1/messages');
  const http = modelHttp(PROVIDER, url, options, {
    'anthropic-version': options.anthropicVersion ?? '2023-06-01',
    ...(options.interleavedThinking ? { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } : {}),
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
  });
  const maxBytes = http.maxResponseBytes;
  const ephemeral = { type: 'ephemeral' };
  return {
    provider: PROVIDER,
    modelId: options.model,
    close: () => http.close(),
    async generate(request: ChatRequest, callOptions) {
      const tools: Array<Record<string, unknown>> = request.tools.map((t) => ({ ...anthropicToolFromDefinition(t) }));
      if (options.cacheControl?.tools && tools.length > 0)
        tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: ephemeral };
      const system = request.system
        ? options.cacheControl?.system
          ? [{ type: 'text', text: request.system, cache_control: ephemeral }]
          : request.system
        : undefined;
      // Anthropic refuses tool_use/tool_result blocks without tool definitions, so "no tools" is tool_choice none.
      const body: Record<string, unknown> = {
        model: options.model,
        max_tokens: options.maxTokens ?? 4096,
        ...(system ? { system } : {}),
        messages: toAnthropicMessages(request.messages, options),
        ...(tools.length > 0 ? { tools } : {}),
        ...(tools.length > 0 && request.toolChoice === 'none' ? { tool_choice: { type: 'none' } } : {}),
        ...(options.thinkingBudgetTokens
          ? { thinking: { type: 'enabled', budget_tokens: options.thinkingBudgetTokens } }
          : {}),
        ...(options.stream ? { stream: true } : {}),
        ...(options.body ?? {}),
      };
      return http.post(body, callOptions, async (responseBody, contentType) => {
        if (options.stream && !contentType.includes('json'))
          return parseMessageStream(readSseEvents(responseBody), callOptions);
        return parseMessage(await readBodyJson(responseBody, maxBytes, `${PROVIDER} response`));
      });
    },
  };
}
