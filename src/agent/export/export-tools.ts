/**
 * Registered tools in the shapes model SDKs take: OpenAI `tools`, Anthropic `tools`, Vercel AI SDK tool records.
 * Pass one `ToolNameCodec` to map the model's tool-call names back to client names with `names.decode()`.
 */
import type { JsonObject, JsonSchema, Tool, UtcpClient } from '../../index.js';
import type { ModelToolDefinition } from '../chat-model.js';
import { toAnthropicInputSchema, toObjectRootSchema, toOpenAIParameters } from './schema-convert.js';
import { toolDefinition } from './tool-definitions.js';
import { ToolNameCodec } from './tool-names.js';

/** An OpenAI Chat Completions function tool. */
export interface OpenAITool {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonSchema; strict?: boolean };
}

/** An Anthropic Messages API tool. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
}

/** A tool in the Vercel AI SDK's `tool()` shape. */
export interface VercelAiTool {
  description: string;
  /** `jsonSchema(inputs)` when a wrapper was given, else the plain JSON Schema. */
  inputSchema: unknown;
  execute(input: JsonObject, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

export interface ExportToolsOptions {
  /** Encodes the names; keep it to decode the model's tool calls. @default a new codec */
  names?: ToolNameCodec;
  /** Longest description kept, in characters. @default 1024 */
  maxDescriptionChars?: number;
}

/** @internal */
export function openAIToolFromDefinition(def: ModelToolDefinition, strict: boolean): OpenAITool {
  const converted = toOpenAIParameters(def.inputSchema, { strict });
  return {
    type: 'function',
    function: {
      name: def.name,
      ...(def.description ? { description: def.description } : {}),
      parameters: converted.parameters,
      ...(converted.strict ? { strict: true } : {}),
    },
  };
}

/** @internal */
export function anthropicToolFromDefinition(def: ModelToolDefinition): AnthropicTool {
  return {
    name: def.name,
    ...(def.description ? { description: def.description } : {}),
    input_schema: toAnthropicInputSchema(def.inputSchema),
  };
}

/**
 * Tools for OpenAI Chat Completions (`tools` of the request). With `strict`, schemas are converted to strict mode
 * where they can be (see `toOpenAIParameters`); run the model's arguments through `dropStrictModeNulls` before calling.
 */
export function toOpenAITools(
  tools: readonly Tool[],
  options: ExportToolsOptions & { strict?: boolean } = {},
): OpenAITool[] {
  const names = options.names ?? new ToolNameCodec();
  return tools.map((t) =>
    openAIToolFromDefinition(toolDefinition(t, names, options.maxDescriptionChars), options.strict ?? false),
  );
}

/** Tools for the Anthropic Messages API (`tools` of the request). */
export function toAnthropicTools(tools: readonly Tool[], options: ExportToolsOptions = {}): AnthropicTool[] {
  const names = options.names ?? new ToolNameCodec();
  return tools.map((t) => anthropicToolFromDefinition(toolDefinition(t, names, options.maxDescriptionChars)));
}

export interface VercelAiToolsOptions extends ExportToolsOptions {
  /**
   * The AI SDK's `jsonSchema` helper (`import { jsonSchema } from 'ai'`). The AI SDK needs schemas wrapped by it;
   * without it, `inputSchema` is the plain JSON Schema, to wrap yourself.
   */
  jsonSchema?: (schema: JsonSchema) => unknown;
  /** Deadline per call, in milliseconds. @default the client's */
  timeoutMs?: number;
}

/**
 * Tools for the Vercel AI SDK (`generateText({ tools })`), keyed by encoded name; `execute` calls the tool
 * through the client with the AI SDK's abort signal. Tool errors are thrown for the AI SDK to report.
 */
export function toVercelAiTools(
  client: Pick<UtcpClient, 'callTool'>,
  tools: readonly Tool[],
  options: VercelAiToolsOptions = {},
): Record<string, VercelAiTool> {
  const names = options.names ?? new ToolNameCodec();
  const out: Record<string, VercelAiTool> = {};
  for (const tool of tools) {
    const def = toolDefinition(tool, names, options.maxDescriptionChars);
    const schema = toObjectRootSchema(def.inputSchema);
    out[def.name] = {
      description: def.description,
      inputSchema: options.jsonSchema ? options.jsonSchema(schema) : schema,
      execute: (input, callOptions) =>
        client.callTool(tool.name, input, { signal: callOptions?.abortSignal, timeoutMs: options.timeoutMs }),
    };
  }
  return out;
}
