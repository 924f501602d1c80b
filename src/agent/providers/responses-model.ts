/**
 * A ChatModel over the OpenAI Responses API (docs/design/agent.md#openai-responses): reasoning items come back
 * encrypted (`store: false`) and are sent back with the turn's function calls, in order.
 */
import { randomUUID } from 'node:crypto';
import { UtcpError } from '../../index.js';
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse, TokenUsage } from '../chat-model.js';
import { tokenUsage } from './token-usage.js';
import { openAIToolFromDefinition } from '../export/export-tools.js';
import { assertNever, type AgentMessage, type MediaContent, type ToolCall } from '../messages.js';
import { isCommonImage, joinText, splitMedia, type ModelConnectionOptions } from './common.js';
import { endpointUrl, modelHttp, parseEventJson, readBodyJson, readSseEvents } from './model-http.js';
import { dropStrictModeNulls } from './strict-arguments.js';

export interface ResponsesModelOptions extends ModelConnectionOptions {
  /** Model id, e.g. `gpt-5-mini`, `o4-mini`. */
  model: string;
  /** Base URL including the version path. @default "https://api.openai.com/v1" */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** Stream the answer (SSE) and report text as it arrives. @default false */
  stream?: boolean;
  /** Use strict function schemas where a tool's schema allows it. @default false */
  strict?: boolean;
  /** `reasoning.effort` (`minimal`, `low`, `medium`, `high`) for reasoning models. */
  reasoningEffort?: string;
  /** Sent as `parallel_tool_calls` when set. */
  parallelToolCalls?: boolean;
}

const PROVIDER = 'openai-responses';
type Item = Record<string, unknown> & { type?: string };

function inputImage(m: MediaContent): Item {
  // `detail` is required by the Responses API's own schema; `auto` lets the model choose, as its default would.
  return { type: 'input_image', image_url: `data:${m.mediaType};base64,${m.data}`, detail: 'auto' };
}

/** @internal The Responses API `input` items for a conversation. */
export function toResponsesInput(messages: readonly AgentMessage[], options: ModelConnectionOptions = {}): Item[] {
  const out: Item[] = [];
  for (const m of messages) {
    switch (m.type) {
      case 'user': {
        const { native, note } = splitMedia(m.media, options, isCommonImage);
        const text = joinText(m.text, note);
        out.push({
          role: 'user',
          content: [...(text ? [{ type: 'input_text', text }] : []), ...native.map(inputImage)],
        });
        break;
      }
      case 'assistant':
        if (m.providerData?.provider === PROVIDER) out.push(...(m.providerData.items as Item[]));
        else if (m.text)
          out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.text }] });
        break;
      case 'tool_calls':
        if (m.providerData?.provider === PROVIDER) {
          out.push(...(m.providerData.items as Item[]));
        } else {
          if (m.text)
            out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.text }] });
          for (const c of m.calls)
            out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments });
        }
        break;
      case 'tool_result': {
        const { native, note } = splitMedia(m.media, options, isCommonImage);
        const text = joinText(m.content, note);
        const output = native.length > 0 ? [{ type: 'input_text', text }, ...native.map(inputImage)] : text;
        out.push({ type: 'function_call_output', call_id: m.toolCallId, output });
        break;
      }
      default:
        assertNever(m);
    }
  }
  return out;
}

interface WireUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  input_tokens_details?: { cached_tokens?: unknown };
  output_tokens_details?: { reasoning_tokens?: unknown };
}

function toUsage(u: WireUsage | undefined): TokenUsage | undefined {
  if (!u || typeof u.input_tokens !== 'number') return undefined;
  return tokenUsage(
    u.input_tokens,
    u.output_tokens,
    u.input_tokens_details?.cached_tokens,
    u.output_tokens_details?.reasoning_tokens,
  );
}

interface WireResponse {
  id?: string;
  status?: string;
  output?: Item[];
  usage?: WireUsage;
  error?: { code?: string; message?: string } | null;
  incomplete_details?: { reason?: string } | null;
}

/** Output items as they are sent back: ids and statuses the API assigned are kept. */
function fromOutput(response: WireResponse): ChatResponse {
  if (!Array.isArray(response.output))
    throw new UtcpError('PROTOCOL_ERROR', `${PROVIDER} answered without an output array`);
  if (response.status === 'failed')
    throw new UtcpError(
      'PROTOCOL_ERROR',
      `${PROVIDER} response failed: ${response.error?.code ?? 'error'}: ${response.error?.message ?? 'unknown error'}`,
    );
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const item of response.output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content as Array<{ type?: string; text?: unknown; refusal?: unknown }>) {
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
        else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
      }
    } else if (item.type === 'function_call' && typeof item.name === 'string') {
      const id =
        typeof item.call_id === 'string' && item.call_id
          ? item.call_id
          : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      item.call_id = id;
      toolCalls.push({
        id,
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
      });
    }
  }
  const finishReason = response.incomplete_details?.reason ?? response.status;
  return {
    text,
    toolCalls,
    usage: toUsage(response.usage),
    ...(finishReason ? { finishReason } : {}),
    providerData: { provider: PROVIDER, items: response.output },
  };
}

async function parseStream(events: AsyncIterable<{ data: string }>, options: ChatCallOptions): Promise<ChatResponse> {
  const items = new Map<number, Item>();
  for await (const event of events) {
    if (event.data.trim() === '[DONE]') break;
    const e = parseEventJson<{
      type?: string;
      delta?: string;
      item?: Item;
      output_index?: number;
      response?: WireResponse;
      message?: string;
      code?: string;
    }>(event.data, PROVIDER);
    if (e.type === 'response.output_text.delta' && typeof e.delta === 'string') options.onTextDelta?.(e.delta);
    else if (e.type === 'response.output_item.done' && e.item) items.set(e.output_index ?? items.size, e.item);
    else if (e.type === 'response.completed' || e.type === 'response.incomplete') {
      const response = e.response ?? {};
      // Some servers send the final response without its output: rebuild it from the items seen.
      if (!Array.isArray(response.output) || response.output.length === 0)
        response.output = [...items.entries()].sort(([a], [b]) => a - b).map(([, v]) => v);
      return fromOutput(response);
    } else if (e.type === 'response.failed') {
      throw new UtcpError(
        'PROTOCOL_ERROR',
        `${PROVIDER} response failed: ${e.response?.error?.code ?? 'error'}: ${e.response?.error?.message ?? 'unknown error'}`,
      );
    } else if (e.type === 'error') {
      throw new UtcpError(
        'PROTOCOL_ERROR',
        `${PROVIDER} stream failed: ${e.code ?? 'error'}: ${e.message ?? 'unknown error'}`,
      );
    }
  }
  throw new UtcpError('PROTOCOL_ERROR', `${PROVIDER} stream ended without response.completed`);
}

/**
 * A ChatModel over the OpenAI Responses API (`/v1/responses`), stateless (`store: false`): reasoning items are
 * returned encrypted and sent back with the next turn, so reasoning models keep their chain of thought across tool calls.
 */
export function responsesModel(options: ResponsesModelOptions): ChatModel {
  const url = endpointUrl(options.baseUrl ?? 'https://api.openai.com/v1', 'responses');
  const http = modelHttp(PROVIDER, url, options, options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {});
  const strict = options.strict ?? false;
  const maxBytes = http.maxResponseBytes;
  return {
    provider: PROVIDER,
    modelId: options.model,
    close: () => http.close(),
    async generate(request: ChatRequest, callOptions) {
      const withTools = request.toolChoice === 'auto' && request.tools.length > 0;
      const body: Record<string, unknown> = {
        model: options.model,
        ...(request.system ? { instructions: request.system } : {}),
        input: toResponsesInput(request.messages, options),
        ...(request.tools.length > 0
          ? {
              tools: request.tools.map((t) => {
                const f = openAIToolFromDefinition(t, strict).function;
                return {
                  type: 'function',
                  name: f.name,
                  ...(f.description ? { description: f.description } : {}),
                  parameters: f.parameters,
                  strict: f.strict ?? false,
                };
              }),
              tool_choice: withTools ? 'auto' : 'none',
            }
          : {}),
        ...(withTools && options.parallelToolCalls !== undefined
          ? { parallel_tool_calls: options.parallelToolCalls }
          : {}),
        ...(options.reasoningEffort ? { reasoning: { effort: options.reasoningEffort } } : {}),
        store: false,
        include: ['reasoning.encrypted_content'],
        ...(options.stream ? { stream: true } : {}),
        ...(options.body ?? {}),
      };
      return http.post(body, callOptions, async (responseBody, contentType) => {
        if (options.stream && !contentType.includes('json'))
          return parseStream(readSseEvents(responseBody), callOptions);
        return fromOutput((await readBodyJson(responseBody, maxBytes, `${PROVIDER} response`)) as WireResponse);
      });
    },
    ...(strict ? { prepareArguments: dropStrictModeNulls } : {}),
  };
}
