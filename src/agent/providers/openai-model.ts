/**
 * A ChatModel over the OpenAI Chat Completions wire format (docs/design/agent.md#openai-chat-completions). Tool messages
 * take text only, so images from tools follow the turn's tool messages in one user message.
 */
import { randomUUID } from 'node:crypto';
import { UtcpError } from '../../index.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, TokenUsage } from '../chat-model.js';
import { tokenUsage } from './token-usage.js';
import { openAIToolFromDefinition } from '../export/export-tools.js';
import { assertNever, type MediaContent, type ToolCall } from '../messages.js';
import { isCommonImage, joinText, splitMedia, type ModelConnectionOptions } from './common.js';
import { endpointUrl, modelHttp, parseEventJson, readBodyJson, readSseEvents } from './model-http.js';
import { dropStrictModeNulls } from './strict-arguments.js';

export interface OpenAIChatModelOptions extends ModelConnectionOptions {
  /** Model id, e.g. `gpt-4.1-mini`, `llama3.1`. */
  model: string;
  /** Base URL including the version path. @default "https://api.openai.com/v1" */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer …`. Omit for servers without auth (Ollama, llama.cpp). */
  apiKey?: string;
  /**
   * Stream the answer (SSE) and report text as it arrives. Sends `stream_options: { include_usage: true }`;
   * pass `body: { stream_options: undefined }` for a server that rejects it. @default false
   */
  stream?: boolean;
  /** Use strict function schemas where a tool's schema allows it. @default false */
  strict?: boolean;
  /** Sent as `parallel_tool_calls` when set. */
  parallelToolCalls?: boolean;
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
  return content
    .map((p: { type?: string; text?: unknown }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .join('');
}

interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown };
  completion_tokens_details?: { reasoning_tokens?: unknown };
}

function toUsage(usage: WireUsage | undefined): TokenUsage | undefined {
  if (!usage || typeof usage.prompt_tokens !== 'number') return undefined;
  return tokenUsage(
    usage.prompt_tokens,
    usage.completion_tokens,
    usage.prompt_tokens_details?.cached_tokens,
    usage.completion_tokens_details?.reasoning_tokens,
  );
}

/** Audio formats a user message takes as `input_audio`. */
function audioFormat(m: MediaContent): string | undefined {
  const t = m.mediaType.toLowerCase();
  if (m.type !== 'audio') return undefined;
  return t === 'audio/wav' || t === 'audio/x-wav' || t === 'audio/wave'
    ? 'wav'
    : t === 'audio/mpeg' || t === 'audio/mp3'
      ? 'mp3'
      : undefined;
}

function mediaPart(m: MediaContent): Record<string, unknown> {
  const format = audioFormat(m);
  if (format) return { type: 'input_audio', input_audio: { data: m.data, format } };
  return { type: 'image_url', image_url: { url: `data:${m.mediaType};base64,${m.data}` } };
}

const acceptsMedia = (m: MediaContent): boolean => isCommonImage(m) || audioFormat(m) !== undefined;

function userContent(text: string, media: readonly MediaContent[]): string | Array<Record<string, unknown>> {
  if (media.length === 0) return text;
  return [...(text ? [{ type: 'text', text }] : []), ...media.map(mediaPart)];
}

/**
 * @internal The Chat Completions `messages` for a request. Images and sounds from one turn's tool results
 * go in one user message after that turn's tool messages (tool messages take text only, and must follow
 * their assistant message without anything in between).
 */
export function toOpenAIMessages(
  request: ChatRequest,
  options: ModelConnectionOptions = {},
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  let pendingMedia: Array<{ name: string; media: MediaContent[] }> = [];
  const flushMedia = () => {
    if (pendingMedia.length === 0) return;
    const media = pendingMedia.flatMap((p) => p.media);
    const names = [...new Set(pendingMedia.map((p) => p.name))].join(', ');
    out.push({ role: 'user', content: userContent(`[Media returned by ${names}]`, media) });
    pendingMedia = [];
  };
  for (const m of request.messages) {
    if (m.type !== 'tool_result') flushMedia();
    switch (m.type) {
      case 'user': {
        const { native, note } = splitMedia(m.media, options, acceptsMedia);
        out.push({ role: 'user', content: userContent(joinText(m.text, note), native) });
        break;
      }
      case 'assistant':
        out.push({ role: 'assistant', content: m.text });
        break;
      case 'tool_calls':
        out.push({
          role: 'assistant',
          content: m.text === '' ? null : m.text,
          tool_calls: m.calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        });
        break;
      case 'tool_result': {
        const { native, note } = splitMedia(m.media, options, acceptsMedia);
        out.push({
          role: 'tool',
          tool_call_id: m.toolCallId,
          content: joinText(
            m.content,
            note,
            native.length > 0 ? `[${native.length} attachment(s) follow in the next message]` : '',
          ),
        });
        if (native.length > 0) pendingMedia.push({ name: m.toolName, media: native });
        break;
      }
      default:
        assertNever(m);
    }
  }
  flushMedia();
  return out;
}

function toToolCall(wire: OpenAIWireToolCall): ToolCall {
  return {
    id: wire.id || `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    name: wire.function?.name ?? '',
    arguments: argumentsText(wire.function?.arguments),
  };
}

function parseCompletion(data: unknown, provider: string): ChatResponse {
  const d = data as {
    choices?: Array<{ message?: { content?: unknown; tool_calls?: OpenAIWireToolCall[] }; finish_reason?: string }>;
    usage?: WireUsage;
  };
  const choice = d?.choices?.[0];
  if (!choice?.message) throw new UtcpError('PROTOCOL_ERROR', `${provider} answered without choices[0].message`);
  const toolCalls = (choice.message.tool_calls ?? []).filter((c) => c?.function?.name).map(toToolCall);
  return {
    text: contentText(choice.message.content),
    toolCalls,
    usage: toUsage(d.usage),
    finishReason: choice.finish_reason ?? undefined,
  };
}

async function parseCompletionStream(
  events: AsyncIterable<{ data: string }>,
  provider: string,
  options: ChatCallOptions,
): Promise<ChatResponse> {
  let text = '';
  let usage: TokenUsage | undefined;
  let finishReason: string | undefined;
  const calls = new Map<number, OpenAIWireToolCall & { name: string; args: string }>();
  for await (const event of events) {
    if (event.data.trim() === '[DONE]') break;
    const chunk = parseEventJson<{
      error?: { message?: string };
      usage?: WireUsage;
      choices?: Array<{
        delta?: { content?: unknown; tool_calls?: OpenAIWireToolCall[] };
        finish_reason?: string | null;
      }>;
    }>(event.data, provider);
    if (chunk.error)
      throw new UtcpError('PROTOCOL_ERROR', `${provider} stream failed: ${chunk.error.message ?? 'unknown error'}`);
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
  const http = modelHttp(provider, url, options, options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {});
  const strict = options.strict ?? false;
  return {
    provider,
    modelId: options.model,
    close: () => http.close(),
    async generate(request, callOptions) {
      const withTools = request.toolChoice === 'auto' && request.tools.length > 0;
      const body: Record<string, unknown> = {
        model: options.model,
        messages: toOpenAIMessages(request, options),
        ...(withTools ? { tools: request.tools.map((t) => openAIToolFromDefinition(t, strict)) } : {}),
        ...(withTools && options.parallelToolCalls !== undefined
          ? { parallel_tool_calls: options.parallelToolCalls }
          : {}),
        ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        ...(options.body ?? {}),
      };
      return http.post(body, callOptions, async (responseBody, contentType) => {
        if (options.stream && !contentType.includes('json'))
          return parseCompletionStream(readSseEvents(responseBody), provider, callOptions);
        return parseCompletion(
          await readBodyJson(responseBody, http.maxResponseBytes, `${provider} response`),
          provider,
        );
      });
    },
    ...(strict ? { prepareArguments: dropStrictModeNulls } : {}),
  };
}
