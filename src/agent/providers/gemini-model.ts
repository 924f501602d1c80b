/**
 * A ChatModel over the Google Gemini API, `generateContent` and `streamGenerateContent` with function calling
 * (docs/design/agent.md#gemini). The model's parts go back unchanged, so thought signatures survive tool calls.
 */
import type { JsonSchema } from '../../index.js';
import { UtcpError } from '../../index.js';
import type {
  ChatCallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ModelToolDefinition,
  TokenUsage,
} from '../chat-model.js';
import { isSchemaObject, resolveLocalRef, toObjectRootSchema } from '../export/schema-convert.js';
import { assertNever, type AgentMessage, type MediaContent, type ToolCall } from '../messages.js';
import { inputObject, joinText, splitMedia, type ModelConnectionOptions } from './common.js';
import { endpointUrl, modelHttp, parseEventJson, readBodyJson, readSseEvents } from './model-http.js';

export interface GeminiModelOptions extends ModelConnectionOptions {
  /** Model id, e.g. `gemini-2.5-flash`. */
  model: string;
  /** Sent as `x-goog-api-key`. */
  apiKey?: string;
  /** Base URL including the version path. @default "https://generativelanguage.googleapis.com/v1beta" */
  baseUrl?: string;
  /** Stream the answer (`streamGenerateContent?alt=sse`) and report text as it arrives. @default false */
  stream?: boolean;
  /** `generationConfig.maxOutputTokens`. */
  maxOutputTokens?: number;
  /** `generationConfig.thinkingConfig.thinkingBudget` for thinking models. */
  thinkingBudget?: number;
}

const PROVIDER = 'gemini';
const GENERATED_ID = 'gemini_call_';
type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

// ---------------------------------------------------------------- schemas

const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'properties',
  'required',
  'items',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minProperties',
  'maxProperties',
  'anyOf',
  'propertyOrdering',
]);

function geminiSchema(schema: unknown, root: Record<string, unknown>, depth: number): Record<string, unknown> {
  if (!isSchemaObject(schema) || depth > 24) return {};
  let s: Record<string, unknown> = schema;
  if (typeof s.$ref === 'string')
    s = {
      ...(resolveLocalRef(s.$ref, root) ?? {}),
      ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== '$ref')),
    };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(s)) {
    if (!KEPT.has(key) && key !== 'const' && key !== 'oneOf') continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      if (types.length < value.length) out.nullable = true;
      if (types.length === 1) out.type = types[0];
      else if (types.length > 1) out.anyOf = types.map((t) => ({ type: t }));
    } else if (key === 'type' && value === 'null') {
      out.nullable = true;
    } else if (key === 'const') {
      out.enum = [value];
    } else if (key === 'properties' && isSchemaObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, geminiSchema(v, root, depth + 1)]));
    } else if (key === 'items') {
      out.items = geminiSchema(Array.isArray(value) ? value[0] : value, root, depth + 1);
    } else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out.anyOf = value.map((v) => geminiSchema(v, root, depth + 1));
    } else if (key === 'enum' && Array.isArray(value)) {
      out.enum = value.filter((v) => v !== null).map(String);
    } else if (key === 'format') {
      // Only these formats are accepted; others would be refused.
      if (
        value === 'enum' ||
        value === 'date-time' ||
        value === 'int32' ||
        value === 'int64' ||
        value === 'float' ||
        value === 'double'
      )
        out.format = value;
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.required) && isSchemaObject(out.properties))
    out.required = (out.required as unknown[]).filter((r) => typeof r === 'string' && r in (out.properties as object));
  return out;
}

/** @internal A tool's `parameters` for Gemini, or undefined for a tool without parameters. */
export function toGeminiParameters(schema: JsonSchema | undefined): Record<string, unknown> | undefined {
  const root = toObjectRootSchema(schema) as Record<string, unknown>;
  const converted = geminiSchema(root, root, 0);
  return isSchemaObject(converted.properties) && Object.keys(converted.properties).length > 0 ? converted : undefined;
}

/** Function names must start with a letter or underscore. */
const wireName = (name: string): string => (/^[a-zA-Z_]/.test(name) ? name : `_${name}`);

// ---------------------------------------------------------------- messages

function inline(m: MediaContent): Part {
  return { inlineData: { mimeType: m.mediaType, data: m.data } };
}

const acceptsMedia = (m: MediaContent): boolean => m.type === 'image' || m.type === 'audio';

/** @internal The `contents` for a conversation: consecutive contents of one role merged, tool results in one user content. */
export function toGeminiContents(messages: readonly AgentMessage[], options: ModelConnectionOptions = {}): Content[] {
  const out: Content[] = [];
  const push = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else out.push({ role, parts: [...parts] });
  };
  let toolMedia: Part[] = [];
  const flush = () => {
    if (toolMedia.length > 0) push('user', toolMedia);
    toolMedia = [];
  };
  for (const m of messages) {
    if (m.type !== 'tool_result') flush();
    switch (m.type) {
      case 'user': {
        const { native, note } = splitMedia(m.media, options, acceptsMedia);
        const text = joinText(m.text, note);
        push('user', [...(text ? [{ text }] : []), ...native.map(inline)]);
        break;
      }
      case 'assistant':
        push(
          'model',
          m.providerData?.provider === PROVIDER ? (m.providerData.items as Part[]) : m.text ? [{ text: m.text }] : [],
        );
        break;
      case 'tool_calls':
        if (m.providerData?.provider === PROVIDER) push('model', m.providerData.items as Part[]);
        else
          push('model', [
            ...(m.text ? [{ text: m.text }] : []),
            ...m.calls.map((c) => ({
              functionCall: {
                name: wireName(c.name),
                args: inputObject(c.arguments),
                ...(c.id.startsWith(GENERATED_ID) ? {} : { id: c.id }),
              },
            })),
          ]);
        break;
      case 'tool_result': {
        const { native, note } = splitMedia(m.media, options, acceptsMedia);
        const text = joinText(m.content, note);
        push('user', [
          {
            functionResponse: {
              name: wireName(m.toolName),
              response: m.isError ? { error: text } : { output: text },
              ...(m.toolCallId.startsWith(GENERATED_ID) ? {} : { id: m.toolCallId }),
            },
          },
        ]);
        // The images follow every function response of the turn.
        toolMedia.push(...native.map(inline));
        break;
      }
      default:
        assertNever(m);
    }
  }
  flush();
  return out;
}

// ---------------------------------------------------------------- responses

interface WireUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

function toUsage(u: WireUsage | undefined): TokenUsage | undefined {
  if (!u || typeof u.promptTokenCount !== 'number') return undefined;
  const thoughts = u.thoughtsTokenCount ?? 0;
  return {
    inputTokens: u.promptTokenCount,
    outputTokens: (u.candidatesTokenCount ?? 0) + thoughts,
    ...(u.cachedContentTokenCount ? { cachedInputTokens: u.cachedContentTokenCount } : {}),
    ...(thoughts ? { reasoningTokens: thoughts } : {}),
  };
}

interface WireResponse {
  candidates?: Array<{ content?: { parts?: Part[] }; finishReason?: string }>;
  usageMetadata?: WireUsage;
  promptFeedback?: { blockReason?: string };
  error?: { code?: number; message?: string; status?: string };
}

function fromParts(
  parts: Part[],
  names: Map<string, string>,
  finishReason: string | undefined,
  usage: TokenUsage | undefined,
): ChatResponse {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let signed = false;
  parts.forEach((p) => {
    if (p.thoughtSignature) signed = true;
    if (typeof p.text === 'string' && !p.thought) text += p.text;
    const call = p.functionCall as { name?: string; args?: unknown; id?: string } | undefined;
    if (call?.name) {
      toolCalls.push({
        id: call.id || `${GENERATED_ID}${toolCalls.length + 1}_${Date.now().toString(36)}`,
        name: names.get(call.name) ?? call.name,
        arguments: JSON.stringify(call.args ?? {}),
      });
    }
  });
  return {
    text,
    toolCalls,
    usage,
    ...(finishReason ? { finishReason } : {}),
    ...(signed ? { providerData: { provider: PROVIDER, items: parts } } : {}),
  };
}

function parseResponse(d: WireResponse, names: Map<string, string>): ChatResponse {
  const candidate = d.candidates?.[0];
  if (!candidate) {
    if (d.promptFeedback?.blockReason)
      return { text: '', toolCalls: [], usage: toUsage(d.usageMetadata), finishReason: d.promptFeedback.blockReason };
    throw new UtcpError('PROTOCOL_ERROR', `${PROVIDER} answered without candidates`);
  }
  return fromParts(candidate.content?.parts ?? [], names, candidate.finishReason, toUsage(d.usageMetadata));
}

async function parseStream(
  events: AsyncIterable<{ data: string }>,
  names: Map<string, string>,
  options: ChatCallOptions,
): Promise<ChatResponse> {
  const parts: Part[] = [];
  let usage: TokenUsage | undefined;
  let finishReason: string | undefined;
  for await (const event of events) {
    const chunk = parseEventJson<WireResponse>(event.data, PROVIDER);
    if (chunk.error)
      throw new UtcpError(
        'PROTOCOL_ERROR',
        `${PROVIDER} stream failed: ${chunk.error.status ?? chunk.error.code ?? 'error'}: ${chunk.error.message ?? 'unknown error'}`,
      );
    usage = toUsage(chunk.usageMetadata) ?? usage;
    const candidate = chunk.candidates?.[0];
    if (candidate?.finishReason) finishReason = candidate.finishReason;
    for (const part of candidate?.content?.parts ?? []) {
      const last = parts.at(-1);
      // Text arrives in pieces: join consecutive text parts of one kind (a signature may come with any piece).
      if (
        typeof part.text === 'string' &&
        last &&
        typeof last.text === 'string' &&
        Boolean(last.thought) === Boolean(part.thought) &&
        !last.functionCall
      ) {
        last.text += part.text;
        if (part.thoughtSignature) last.thoughtSignature = part.thoughtSignature;
      } else parts.push({ ...part });
      if (typeof part.text === 'string' && !part.thought && part.text) options.onTextDelta?.(part.text);
    }
  }
  return fromParts(parts, names, finishReason, usage);
}

function declaration(t: ModelToolDefinition): Record<string, unknown> {
  const parameters = toGeminiParameters(t.inputSchema);
  return {
    name: wireName(t.name),
    ...(t.description ? { description: t.description } : {}),
    ...(parameters ? { parameters } : {}),
  };
}

/** A ChatModel over Google's Gemini API (Generative Language API), with optional streaming. */
export function geminiModel(options: GeminiModelOptions): ChatModel {
  const base = options.baseUrl ?? 'https://generativelanguage.googleapis.com/v1beta';
  const model = encodeURIComponent(options.model.replace(/^models\//, ''));
  const url = endpointUrl(base, `models/${model}:${options.stream ? 'streamGenerateContent' : 'generateContent'}`);
  if (options.stream) url.searchParams.set('alt', 'sse');
  const http = modelHttp(PROVIDER, url, options, options.apiKey ? { 'x-goog-api-key': options.apiKey } : {});
  const maxBytes = http.maxResponseBytes;
  return {
    provider: PROVIDER,
    modelId: options.model,
    close: () => http.close(),
    // One character is kept for the `_` a name starting with a digit gets.
    maxToolNameLength: 63,
    async generate(request: ChatRequest, callOptions) {
      const names = new Map(request.tools.map((t) => [wireName(t.name), t.name]));
      const generationConfig = {
        ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
        ...(options.thinkingBudget !== undefined ? { thinkingConfig: { thinkingBudget: options.thinkingBudget } } : {}),
      };
      const body: Record<string, unknown> = {
        contents: toGeminiContents(request.messages, options),
        ...(request.system ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
        ...(request.tools.length > 0
          ? {
              tools: [{ functionDeclarations: request.tools.map(declaration) }],
              toolConfig: { functionCallingConfig: { mode: request.toolChoice === 'none' ? 'NONE' : 'AUTO' } },
            }
          : {}),
        ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
        ...(options.body ?? {}),
      };
      return http.post(body, callOptions, async (responseBody, contentType) => {
        if (options.stream && !contentType.includes('json'))
          return parseStream(readSseEvents(responseBody), names, callOptions);
        return parseResponse(
          (await readBodyJson(responseBody, maxBytes, `${PROVIDER} response`)) as WireResponse,
          names,
        );
      });
    },
  };
}
